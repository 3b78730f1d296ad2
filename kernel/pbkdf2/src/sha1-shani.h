/*
 * PBKDF2-HMAC-SHA1 rounds on the x86 SHA extensions (SHA-NI), for one derivation or two at once.
 *
 * Why: a round of PBKDF2 is two SHA-1 compressions of one fixed-layout block, and each compression is a chain of
 * twenty dependent SHA1RNDS4 instructions. Called through OpenSSL's SHA1_Transform, a round reads and writes the
 * context and the block through memory (0.50 ms per 4 096-round derivation on an AMD EPYC VM); here the chaining
 * values and the block stay in vector registers: 0.28 ms. Two derivations interleaved fill the time one chain waits
 * for its previous instruction: 0.16 ms each. pbkdf2.c pairs derivations that are queued at the same time.
 *
 * Only compiled for x86-64 with GCC or clang; the functions carry their own target attribute, so the rest of
 * the addon needs no -msha, and pbkdf2.c calls them only after CPUID says the instructions exist.
 */
#ifndef SHA1_SHANI_H
#define SHA1_SHANI_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SHA1_SHANI 1
#include <cpuid.h>
#include <immintrin.h>
#include <stdint.h>

#define SHANI_TARGET __attribute__((target("sha,sse4.1,ssse3")))

/* Whether this CPU has SHA-NI (CPUID.7.0:EBX bit 29) and the SSSE3 and SSE4.1 the code also uses. */
static int cpu_has_sha_ni(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1)) return 0;
  if (__get_cpuid_max(0, NULL) < 7) return 0;
  __cpuid_count(7, 0, a, b, c, d);
  return (b & (1u << 29)) != 0;
}

/* A SHA-1 chaining value in SHA-NI's layout: abcd holds a, b, c, d in lanes 3 to 0; e holds e in lane 3, zeros below. */
typedef struct {
  __m128i abcd;
  __m128i e;
} ShaNiState;

/*
 * One compression of the block whose words are w0..w3 (four words each, the first word in lane 3). Message group
 * i >= 4 is SHA1MSG2(SHA1MSG1(W[i-4], W[i-3]) ^ W[i-2], W[i-1]), kept in a window of four; SHA1NEXTE derives each
 * group's e from the state four rounds earlier.
 */
static inline __attribute__((always_inline)) SHANI_TARGET void shani_compress(ShaNiState *s, __m128i w0, __m128i w1, __m128i w2, __m128i w3) {
  const __m128i abcd_start = s->abcd, e_start = s->e;
  __m128i abcd = abcd_start, before = abcd_start, e;
  __m128i w[4] = {w0, w1, w2, w3};
#define SHANI_ROUNDS(i, f)                                                                                            \
  do {                                                                                                              \
    if ((i) >= 4) {                                                                                                 \
      w[(i) & 3] = _mm_sha1msg2_epu32(_mm_xor_si128(_mm_sha1msg1_epu32(w[(i) & 3], w[((i) + 1) & 3]), w[((i) + 2) & 3]), \
                                      w[((i) + 3) & 3]);                                                            \
    }                                                                                                               \
    e = (i) == 0 ? _mm_add_epi32(e_start, w[0]) : _mm_sha1nexte_epu32(before, w[(i) & 3]);                          \
    before = abcd;                                                                                                  \
    abcd = _mm_sha1rnds4_epu32(abcd, e, f);                                                                         \
  } while (0)
  SHANI_ROUNDS(0, 0); SHANI_ROUNDS(1, 0); SHANI_ROUNDS(2, 0); SHANI_ROUNDS(3, 0); SHANI_ROUNDS(4, 0);
  SHANI_ROUNDS(5, 1); SHANI_ROUNDS(6, 1); SHANI_ROUNDS(7, 1); SHANI_ROUNDS(8, 1); SHANI_ROUNDS(9, 1);
  SHANI_ROUNDS(10, 2); SHANI_ROUNDS(11, 2); SHANI_ROUNDS(12, 2); SHANI_ROUNDS(13, 2); SHANI_ROUNDS(14, 2);
  SHANI_ROUNDS(15, 3); SHANI_ROUNDS(16, 3); SHANI_ROUNDS(17, 3); SHANI_ROUNDS(18, 3); SHANI_ROUNDS(19, 3);
#undef SHANI_ROUNDS
  s->e = _mm_sha1nexte_epu32(before, e_start);
  s->abcd = _mm_add_epi32(abcd, abcd_start);
}

/*
 * HMAC(key, U) for a 20-byte U given as a state: the inner hash compresses U's one padded block from the key's inner
 * pad state, the outer hash the inner digest's from the outer pad state. The block is U's five words, 0x80, zeros
 * and the length (64 + 20 bytes, in bits) in its last word.
 */
static inline __attribute__((always_inline)) SHANI_TARGET void shani_hmac(const ShaNiState *inner, const ShaNiState *outer, ShaNiState *u) {
  const __m128i end_bit = _mm_set_epi32(0, (int)0x80000000u, 0, 0), zero = _mm_setzero_si128();
  const __m128i length = _mm_set_epi32(0, 0, 0, (64 + 20) * 8);
  ShaNiState x = *inner;
  shani_compress(&x, u->abcd, _mm_or_si128(u->e, end_bit), zero, length);
  *u = *outer;
  shani_compress(u, x.abcd, _mm_or_si128(x.e, end_bit), zero, length);
}

/* The state of five words h[0..4] (the chaining value or digest as numbers). */
static SHANI_TARGET ShaNiState shani_state(const uint32_t h[5]) {
  ShaNiState s = {_mm_set_epi32((int)h[0], (int)h[1], (int)h[2], (int)h[3]), _mm_set_epi32((int)h[4], 0, 0, 0)};
  return s;
}

static SHANI_TARGET void shani_words(const ShaNiState *s, uint32_t h[5]) {
  h[0] = (uint32_t)_mm_extract_epi32(s->abcd, 3);
  h[1] = (uint32_t)_mm_extract_epi32(s->abcd, 2);
  h[2] = (uint32_t)_mm_extract_epi32(s->abcd, 1);
  h[3] = (uint32_t)_mm_extract_epi32(s->abcd, 0);
  h[4] = (uint32_t)_mm_extract_epi32(s->e, 3);
}

/*
 * Rounds 2..iterations of `lanes` (1 or 2) derivations: each starts from its key's inner and outer pad states and
 * U1 (all as words) and ends with the XOR of every Ui in `t`. The two lanes run in one loop, so the CPU overlaps
 * their chains.
 */
static SHANI_TARGET void shani_pbkdf2_rounds(int lanes, const uint32_t inner[][5], const uint32_t outer[][5], const uint32_t u1[][5],
                                             uint32_t iterations, uint32_t t[][5]) {
  ShaNiState in[2], out[2], u[2], sum[2];
  for (int k = 0; k < lanes; k++) {
    in[k] = shani_state(inner[k]);
    out[k] = shani_state(outer[k]);
    u[k] = sum[k] = shani_state(u1[k]);
  }
  if (lanes == 2) {
    for (uint32_t round = 1; round < iterations; round++) {
      shani_hmac(&in[0], &out[0], &u[0]);
      shani_hmac(&in[1], &out[1], &u[1]);
      sum[0].abcd = _mm_xor_si128(sum[0].abcd, u[0].abcd);
      sum[0].e = _mm_xor_si128(sum[0].e, u[0].e);
      sum[1].abcd = _mm_xor_si128(sum[1].abcd, u[1].abcd);
      sum[1].e = _mm_xor_si128(sum[1].e, u[1].e);
    }
  } else {
    for (uint32_t round = 1; round < iterations; round++) {
      shani_hmac(&in[0], &out[0], &u[0]);
      sum[0].abcd = _mm_xor_si128(sum[0].abcd, u[0].abcd);
      sum[0].e = _mm_xor_si128(sum[0].e, u[0].e);
    }
  }
  for (int k = 0; k < lanes; k++) shani_words(&sum[k], t[k]);
  /* The keys' states and every Ui stay secret: wipe them (volatile, so the stores are not dropped). */
  volatile __m128i *wipe[] = {&in[0].abcd, &in[0].e, &in[1].abcd, &in[1].e, &out[0].abcd, &out[0].e, &out[1].abcd, &out[1].e,
                             &u[0].abcd, &u[0].e, &u[1].abcd, &u[1].e, &sum[0].abcd, &sum[0].e, &sum[1].abcd, &sum[1].e};
  for (size_t i = 0; i < sizeof wipe / sizeof wipe[0]; i++) *wipe[i] = _mm_setzero_si128();
}

#endif /* x86-64 */
#endif /* SHA1_SHANI_H */
