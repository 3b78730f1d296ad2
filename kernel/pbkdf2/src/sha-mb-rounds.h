/*
 * The body of sha-mb.h's multi-buffer rounds, included once per instruction set: sha-mb.h defines MB_TARGET (the
 * functions' target attribute), MB_SUFFIX (their names' suffix), the operations MB_ROL, MB_XOR3, MB_CH and
 * MB_MAJ on __m256i, eight 32-bit lanes, and MB_CLEAR_HIGH (clears the vector registers VZEROALL leaves); each
 * lane is one derivation, vector i of a state holds word i of every lane. No include guard: it is meant to be
 * compiled twice, and it undefines those seven at its end, so that the next instruction set defines its own.
 */
#define MB_CAT_(name, suffix) name##_##suffix
#define MB_CAT(name, suffix) MB_CAT_(name, suffix)
#define MB_NAME(name) MB_CAT(name, MB_SUFFIX)

/* Word `index` of each lane's row, into one vector (rows past `lanes` give zeros). */
static inline __attribute__((always_inline)) MB_TARGET __m256i MB_NAME(mb_gather)(int lanes, const uint32_t *rows, int width, int index) {
  uint32_t words[MB_LANES] = {0};
  for (int k = 0; k < lanes; k++) words[k] = rows[k * width + index];
  return _mm256_loadu_si256((const __m256i *)words);
}

static inline __attribute__((always_inline)) MB_TARGET void MB_NAME(mb_scatter)(int lanes, uint32_t *rows, int width, int index, __m256i v) {
  uint32_t words[MB_LANES];
  _mm256_storeu_si256((__m256i *)words, v);
  for (int k = 0; k < lanes; k++) rows[k * width + index] = words[k];
}

/*
 * One SHA-1 compression of each lane's block w[0..15] into its state s[0..4] (FIPS 180-4 §6.1.2). The schedule
 * keeps sixteen words: W[t] for t >= 16 replaces W[t - 16] in place. Every index is a constant once expanded, so
 * the compiler keeps the words in registers.
 */
static inline __attribute__((always_inline)) MB_TARGET void MB_NAME(mb_sha1_compress)(__m256i s[5], __m256i w[16]) {
  __m256i a = s[0], b = s[1], c = s[2], d = s[3], e = s[4];
#define MB_SHA1_ROUND(t, F, K)                                                                                  \
  do {                                                                                                         \
    if ((t) >= 16) {                                                                                           \
      w[(t) & 15] = MB_ROL(MB_XOR(MB_XOR3(w[((t) - 3) & 15], w[((t) - 8) & 15], w[((t) - 14) & 15]), w[(t) & 15]), 1); \
    }                                                                                                          \
    __m256i sum = MB_ADD(MB_ADD(MB_ROL(a, 5), F(b, c, d)), MB_ADD(MB_ADD(e, _mm256_set1_epi32((int)(K))), w[(t) & 15])); \
    e = d;                                                                                                     \
    d = c;                                                                                                     \
    c = MB_ROL(b, 30);                                                                                         \
    b = a;                                                                                                     \
    a = sum;                                                                                                   \
  } while (0)
#define MB_SHA1_5(t, F, K) \
  MB_SHA1_ROUND(t, F, K); MB_SHA1_ROUND((t) + 1, F, K); MB_SHA1_ROUND((t) + 2, F, K); MB_SHA1_ROUND((t) + 3, F, K); MB_SHA1_ROUND((t) + 4, F, K)
#define MB_SHA1_20(t, F, K) MB_SHA1_5(t, F, K); MB_SHA1_5((t) + 5, F, K); MB_SHA1_5((t) + 10, F, K); MB_SHA1_5((t) + 15, F, K)
  MB_SHA1_20(0, MB_CH, 0x5a827999u);
  MB_SHA1_20(20, MB_XOR3, 0x6ed9eba1u);
  MB_SHA1_20(40, MB_MAJ, 0x8f1bbcdcu);
  MB_SHA1_20(60, MB_XOR3, 0xca62c1d6u);
#undef MB_SHA1_20
#undef MB_SHA1_5
#undef MB_SHA1_ROUND
  const __m256i last[5] = {a, b, c, d, e};
  for (int i = 0; i < 5; i++) s[i] = MB_ADD(s[i], last[i]);
}

static const uint32_t MB_NAME(mb_sha256_k)[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
  0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
  0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
  0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
  0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* One SHA-256 compression of each lane's block w[0..15] into its state s[0..7] (FIPS 180-4 §6.2.2). */
static inline __attribute__((always_inline)) MB_TARGET void MB_NAME(mb_sha256_compress)(__m256i s[8], __m256i w[16]) {
  __m256i a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
#define MB_SHA256_ROUND(t)                                                                                      \
  do {                                                                                                         \
    if ((t) >= 16) {                                                                                           \
      __m256i w2 = w[((t) - 2) & 15], w15 = w[((t) - 15) & 15];                                                \
      __m256i s1 = MB_XOR3(MB_ROR(w2, 17), MB_ROR(w2, 19), MB_SHR(w2, 10));                                    \
      __m256i s0 = MB_XOR3(MB_ROR(w15, 7), MB_ROR(w15, 18), MB_SHR(w15, 3));                                   \
      w[(t) & 15] = MB_ADD(MB_ADD(s1, w[((t) - 7) & 15]), MB_ADD(s0, w[(t) & 15]));                            \
    }                                                                                                          \
    __m256i t1 = MB_ADD(MB_ADD(h, MB_XOR3(MB_ROR(e, 6), MB_ROR(e, 11), MB_ROR(e, 25))),                        \
                        MB_ADD(MB_CH(e, f, g), MB_ADD(_mm256_set1_epi32((int)MB_NAME(mb_sha256_k)[t]), w[(t) & 15]))); \
    __m256i t2 = MB_ADD(MB_XOR3(MB_ROR(a, 2), MB_ROR(a, 13), MB_ROR(a, 22)), MB_MAJ(a, b, c));                 \
    h = g;                                                                                                     \
    g = f;                                                                                                     \
    f = e;                                                                                                     \
    e = MB_ADD(d, t1);                                                                                         \
    d = c;                                                                                                     \
    c = b;                                                                                                     \
    b = a;                                                                                                     \
    a = MB_ADD(t1, t2);                                                                                        \
  } while (0)
#define MB_SHA256_4(t) MB_SHA256_ROUND(t); MB_SHA256_ROUND((t) + 1); MB_SHA256_ROUND((t) + 2); MB_SHA256_ROUND((t) + 3)
#define MB_SHA256_16(t) MB_SHA256_4(t); MB_SHA256_4((t) + 4); MB_SHA256_4((t) + 8); MB_SHA256_4((t) + 12)
  MB_SHA256_16(0);
  MB_SHA256_16(16);
  MB_SHA256_16(32);
  MB_SHA256_16(48);
#undef MB_SHA256_16
#undef MB_SHA256_4
#undef MB_SHA256_ROUND
  const __m256i last[8] = {a, b, c, d, e, f, g, h};
  for (int i = 0; i < 8; i++) s[i] = MB_ADD(s[i], last[i]);
}

/*
 * HMAC's one padded block for a WORDS-word message after the 64-byte pad: the message (one vector per word), 0x80,
 * zeros, and the length of pad and message in bits in the last word.
 */
static inline __attribute__((always_inline)) MB_TARGET void MB_NAME(mb_block)(__m256i w[16], const __m256i *message, int words) {
  for (int i = 0; i < 16; i++) w[i] = _mm256_setzero_si256();
  for (int i = 0; i < words; i++) w[i] = message[i];
  w[words] = _mm256_set1_epi32((int)0x80000000u);
  w[15] = _mm256_set1_epi32((64 + 4 * words) * 8);
}

/*
 * Rounds 2..iterations of `lanes` (1 to 8) PBKDF2-HMAC derivations with the same round count, from each key's inner
 * and outer pad states and U1 (WORDS words each, as pbkdf2.c computes them); writes each lane's T (U1 ^ U2 ^ ...).
 * A round is HMAC(key, U): the inner hash compresses U's one padded block from the inner pad's state, the outer
 * hash the inner digest's from the outer pad's state. One definition per hash (COMPRESS: its compression).
 */
#define MB_DEFINE_PBKDF2_ROUNDS(NAME, WORDS, COMPRESS)                                                             \
  static MB_TARGET void NAME(int lanes, const uint32_t inner[][WORDS], const uint32_t outer[][WORDS],              \
                             const uint32_t u1[][WORDS], uint32_t iterations, uint32_t t[][WORDS]) {               \
    __m256i in[WORDS], out[WORDS], u[WORDS], sum[WORDS], x[WORDS], w[16];                                         \
    for (int i = 0; i < WORDS; i++) {                                                                             \
      in[i] = MB_NAME(mb_gather)(lanes, &inner[0][0], WORDS, i);                                                  \
      out[i] = MB_NAME(mb_gather)(lanes, &outer[0][0], WORDS, i);                                                 \
      u[i] = sum[i] = MB_NAME(mb_gather)(lanes, &u1[0][0], WORDS, i);                                             \
    }                                                                                                             \
    for (uint32_t round = 1; round < iterations; round++) {                                                      \
      MB_NAME(mb_block)(w, u, WORDS);                                                                             \
      for (int i = 0; i < WORDS; i++) x[i] = in[i];                                                               \
      COMPRESS(x, w);                                                                                             \
      MB_NAME(mb_block)(w, x, WORDS);                                                                             \
      for (int i = 0; i < WORDS; i++) u[i] = out[i];                                                              \
      COMPRESS(u, w);                                                                                             \
      for (int i = 0; i < WORDS; i++) sum[i] = MB_XOR(sum[i], u[i]);                                              \
    }                                                                                                             \
    for (int i = 0; i < WORDS; i++) MB_NAME(mb_scatter)(lanes, &t[0][0], WORDS, i, sum[i]);                       \
    _mm256_zeroall();                                                                                             \
    MB_CLEAR_HIGH();                                                                                              \
  }

MB_DEFINE_PBKDF2_ROUNDS(MB_NAME(mb_sha1_pbkdf2_rounds), 5, MB_NAME(mb_sha1_compress))
MB_DEFINE_PBKDF2_ROUNDS(MB_NAME(mb_sha256_pbkdf2_rounds), 8, MB_NAME(mb_sha256_compress))
#undef MB_DEFINE_PBKDF2_ROUNDS

#undef MB_NAME
#undef MB_CAT
#undef MB_CAT_
#undef MB_TARGET
#undef MB_SUFFIX
#undef MB_ROL
#undef MB_XOR3
#undef MB_CH
#undef MB_MAJ
#undef MB_CLEAR_HIGH
