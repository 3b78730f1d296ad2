/*
 * PBKDF2-HMAC-SHA1 and -SHA256 rounds on the x86 SHA extensions (SHA-NI), for one derivation or two at once.
 *
 * Why: a round of PBKDF2 is two SHA-1 compressions of one fixed-layout block, and each compression is a chain of
 * twenty dependent SHA1RNDS4 instructions. Called through OpenSSL's SHA1_Transform, a round reads and writes the
 * context and the block through memory (0.50 ms per 4 096-round derivation on an AMD EPYC VM); here the chaining
 * values and the block stay in vector registers: 0.28 ms. Two derivations interleaved fill the time one chain waits
 * for its previous instruction: 0.16 ms each. pbkdf2.c pairs derivations that are queued at the same time.
 * SHA-256 the same way, with SHA256RNDS2: 0.30 ms alone instead of 0.45.
 *
 * Only compiled for x86-64 with GCC or clang; the functions carry their own target attribute, so the rest of
 * the addon needs no -msha, and pbkdf2.c calls them only after CPUID says the instructions exist.
 */
#ifndef SHA_NI_H
#define SHA_NI_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SHA_NI 1
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


/*
 * SHA-256 the same way (its instructions come with the same CPUID bit): the state as SHA-NI wants it (a, b, e, f
 * and c, d, g, h), the message in natural order (the first word in lane 0), four rounds per step.
 */
typedef struct {
  __m128i abef;
  __m128i cdgh;
} ShaNi256State;

static const uint32_t SHANI_K256[64] __attribute__((aligned(16))) = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
    0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
    0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
    0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
    0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
    0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

/* One compression of the block w0..w3; message group i >= 4 is MSG2(MSG1(W[i-4], W[i-3]) + (W[i-1]:W[i-2] >> 4 bytes), W[i-1]). */
static inline __attribute__((always_inline)) SHANI_TARGET void shani256_compress(ShaNi256State *s, __m128i w0, __m128i w1, __m128i w2, __m128i w3) {
  __m128i abef = s->abef, cdgh = s->cdgh, m;
  __m128i w[4] = {w0, w1, w2, w3};
#define SHANI256_ROUNDS(i)                                                                                              \
  do {                                                                                                                \
    if ((i) >= 4) {                                                                                                   \
      w[(i) & 3] = _mm_sha256msg2_epu32(                                                                              \
          _mm_add_epi32(_mm_sha256msg1_epu32(w[(i) & 3], w[((i) + 1) & 3]), _mm_alignr_epi8(w[((i) + 3) & 3], w[((i) + 2) & 3], 4)), \
          w[((i) + 3) & 3]);                                                                                          \
    }                                                                                                                 \
    m = _mm_add_epi32(w[(i) & 3], _mm_load_si128((const __m128i *)&SHANI_K256[4 * (i)]));                            \
    cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m);                                                                      \
    abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(m, 0x0E));                                             \
  } while (0)
  SHANI256_ROUNDS(0); SHANI256_ROUNDS(1); SHANI256_ROUNDS(2); SHANI256_ROUNDS(3);
  SHANI256_ROUNDS(4); SHANI256_ROUNDS(5); SHANI256_ROUNDS(6); SHANI256_ROUNDS(7);
  SHANI256_ROUNDS(8); SHANI256_ROUNDS(9); SHANI256_ROUNDS(10); SHANI256_ROUNDS(11);
  SHANI256_ROUNDS(12); SHANI256_ROUNDS(13); SHANI256_ROUNDS(14); SHANI256_ROUNDS(15);
#undef SHANI256_ROUNDS
  s->abef = _mm_add_epi32(abef, s->abef);
  s->cdgh = _mm_add_epi32(cdgh, s->cdgh);
}

/* The state's eight words as two message vectors in natural order: h0..h3 and h4..h7. */
static inline __attribute__((always_inline)) SHANI_TARGET void shani256_natural(const ShaNi256State *s, __m128i *low, __m128i *high) {
  const __m128i feba = _mm_shuffle_epi32(s->abef, 0x1B), dchg = _mm_shuffle_epi32(s->cdgh, 0xB1);
  *low = _mm_blend_epi16(feba, dchg, 0xF0);
  *high = _mm_alignr_epi8(dchg, feba, 8);
}

static SHANI_TARGET ShaNi256State shani256_state(const uint32_t h[8]) {
  const __m128i cdab = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0xB1);
  const __m128i hgfe = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(h + 4)), 0x1B);
  ShaNi256State s = {_mm_alignr_epi8(cdab, hgfe, 8), _mm_blend_epi16(hgfe, cdab, 0xF0)};
  return s;
}

/* HMAC-SHA-256(key, U) for a 32-byte U in natural-order vectors, as shani_hmac does for SHA-1. */
static inline __attribute__((always_inline)) SHANI_TARGET void shani256_hmac(const ShaNi256State *inner, const ShaNi256State *outer, __m128i *low, __m128i *high) {
  const __m128i end_bit = _mm_set_epi32(0, 0, 0, (int)0x80000000u), length = _mm_set_epi32((64 + 32) * 8, 0, 0, 0);
  ShaNi256State x = *inner;
  shani256_compress(&x, *low, *high, end_bit, length);
  __m128i digest_low, digest_high;
  shani256_natural(&x, &digest_low, &digest_high);
  x = *outer;
  shani256_compress(&x, digest_low, digest_high, end_bit, length);
  shani256_natural(&x, low, high);
}

/* Rounds 2..iterations of `lanes` (1 or 2) SHA-256 derivations, as shani_pbkdf2_rounds for SHA-1. */
static SHANI_TARGET void shani256_pbkdf2_rounds(int lanes, const uint32_t inner[][8], const uint32_t outer[][8], const uint32_t u1[][8],
                                                uint32_t iterations, uint32_t t[][8]) {
  ShaNi256State in[2], out[2];
  __m128i low[2], high[2], sum_low[2], sum_high[2];
  for (int k = 0; k < lanes; k++) {
    in[k] = shani256_state(inner[k]);
    out[k] = shani256_state(outer[k]);
    low[k] = sum_low[k] = _mm_loadu_si128((const __m128i *)u1[k]);
    high[k] = sum_high[k] = _mm_loadu_si128((const __m128i *)(u1[k] + 4));
  }
  if (lanes == 2) {
    for (uint32_t round = 1; round < iterations; round++) {
      shani256_hmac(&in[0], &out[0], &low[0], &high[0]);
      shani256_hmac(&in[1], &out[1], &low[1], &high[1]);
      sum_low[0] = _mm_xor_si128(sum_low[0], low[0]);
      sum_high[0] = _mm_xor_si128(sum_high[0], high[0]);
      sum_low[1] = _mm_xor_si128(sum_low[1], low[1]);
      sum_high[1] = _mm_xor_si128(sum_high[1], high[1]);
    }
  } else {
    for (uint32_t round = 1; round < iterations; round++) {
      shani256_hmac(&in[0], &out[0], &low[0], &high[0]);
      sum_low[0] = _mm_xor_si128(sum_low[0], low[0]);
      sum_high[0] = _mm_xor_si128(sum_high[0], high[0]);
    }
  }
  for (int k = 0; k < lanes; k++) {
    _mm_storeu_si128((__m128i *)t[k], sum_low[k]);
    _mm_storeu_si128((__m128i *)(t[k] + 4), sum_high[k]);
  }
  volatile __m128i *wipe[] = {&in[0].abef, &in[0].cdgh, &in[1].abef, &in[1].cdgh, &out[0].abef, &out[0].cdgh, &out[1].abef, &out[1].cdgh,
                             &low[0], &low[1], &high[0], &high[1], &sum_low[0], &sum_low[1], &sum_high[0], &sum_high[1]};
  for (size_t i = 0; i < sizeof wipe / sizeof wipe[0]; i++) *wipe[i] = _mm_setzero_si128();
}

#endif /* x86-64 */
#endif /* SHA_NI_H */
