/*
 * PBKDF2-HMAC-SHA1 and -SHA256 rounds for up to eight derivations at once, one per 32-bit lane of AVX2's vectors
 * ("multi-buffer" hashing), for x86 CPUs without the SHA extensions (sha-ni.h covers those).
 *
 * Why: the rounds of one derivation are a chain (each U is the HMAC of the one before), so one derivation cannot
 * use vector lanes; several derivations queued at the same time can, each in its own lane. A bulk registration
 * or a wave of PLAIN logins against stored SCRAM keys queues several at once. On an Intel Xeon VM without SHA-NI,
 * OpenSSL's SHA1_Transform takes 1.0 ms per 4 096-round SHA-1 derivation (2.0 for SHA-256); eight lanes run
 * eight derivations in about the time of one or two.
 *
 * The rounds come from sha-mb-rounds.h, compiled twice: for AVX2 (rotations as two shifts and an or, SHA's
 * choose and majority as three or four logic operations) and for AVX-512VL on the same 256-bit vectors
 * (VPROLD rotates in one instruction and VPTERNLOGD computes any three-input logic function in one). The
 * functions carry their own target attributes, so the rest of the addon needs no -mavx2, and pbkdf2.c calls
 * them only after the CPU says it has the instructions.
 */
#ifndef SHA_MB_H
#define SHA_MB_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SHA_MB 1
#include <immintrin.h>
#include <stdint.h>

/* Derivations per batch: 32-bit lanes of a 256-bit vector. */
#define MB_LANES 8

enum { MB_NONE = 0, MB_AVX2 = 1, MB_AVX512 = 2 };

/* What this CPU (and its operating system, which must save the wider registers) offers. */
static int cpu_mb_level(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) return MB_AVX512;
  if (__builtin_cpu_supports("avx2")) return MB_AVX2;
  return MB_NONE;
}

#define MB_ADD(a, b) _mm256_add_epi32((a), (b))
#define MB_XOR(a, b) _mm256_xor_si256((a), (b))
#define MB_SHR(x, n) _mm256_srli_epi32((x), (n))
#define MB_ROR(x, n) MB_ROL((x), 32 - (n))

/* What a batch leaves in vector registers VZEROALL does not clear: none on AVX2 (it has sixteen). */
#define MB_CLEAR_HIGH() ((void)0)
#define MB_TARGET __attribute__((target("avx2")))
#define MB_SUFFIX avx2
#define MB_ROL(x, n) _mm256_or_si256(_mm256_slli_epi32((x), (n)), _mm256_srli_epi32((x), 32 - (n)))
#define MB_XOR3(a, b, c) _mm256_xor_si256(_mm256_xor_si256((a), (b)), (c))
#define MB_CH(x, y, z) _mm256_xor_si256(_mm256_and_si256((x), (y)), _mm256_andnot_si256((x), (z)))
#define MB_MAJ(x, y, z) _mm256_or_si256(_mm256_and_si256((x), (y)), _mm256_and_si256((z), _mm256_or_si256((x), (y))))
#include "sha-mb-rounds.h"

/* VPTERNLOGD's immediate is the truth table of f(x, y, z) indexed by x·4 + y·2 + z: parity, choose, majority. */
/* AVX-512VL code may use ymm16-31, which VZEROALL leaves as they are: cleared here, so no lane word outlives it. */
#define MB_CLEAR_HIGH()                                                                                          \
  __asm__ volatile("vpxord %%xmm16, %%xmm16, %%xmm16\n\tvpxord %%xmm17, %%xmm17, %%xmm17\n\t"                   \
                   "vpxord %%xmm18, %%xmm18, %%xmm18\n\tvpxord %%xmm19, %%xmm19, %%xmm19\n\t"                   \
                   "vpxord %%xmm20, %%xmm20, %%xmm20\n\tvpxord %%xmm21, %%xmm21, %%xmm21\n\t"                   \
                   "vpxord %%xmm22, %%xmm22, %%xmm22\n\tvpxord %%xmm23, %%xmm23, %%xmm23\n\t"                   \
                   "vpxord %%xmm24, %%xmm24, %%xmm24\n\tvpxord %%xmm25, %%xmm25, %%xmm25\n\t"                   \
                   "vpxord %%xmm26, %%xmm26, %%xmm26\n\tvpxord %%xmm27, %%xmm27, %%xmm27\n\t"                   \
                   "vpxord %%xmm28, %%xmm28, %%xmm28\n\tvpxord %%xmm29, %%xmm29, %%xmm29\n\t"                   \
                   "vpxord %%xmm30, %%xmm30, %%xmm30\n\tvpxord %%xmm31, %%xmm31, %%xmm31" ::                       \
                       : "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25",   \
                         "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31")
#define MB_TARGET __attribute__((target("avx2,avx512f,avx512vl")))
#define MB_SUFFIX avx512
#define MB_ROL(x, n) _mm256_rol_epi32((x), (n))
#define MB_XOR3(a, b, c) _mm256_ternarylogic_epi32((a), (b), (c), 0x96)
#define MB_CH(x, y, z) _mm256_ternarylogic_epi32((x), (y), (z), 0xCA)
#define MB_MAJ(x, y, z) _mm256_ternarylogic_epi32((x), (y), (z), 0xE8)
#include "sha-mb-rounds.h"

#endif
#endif
