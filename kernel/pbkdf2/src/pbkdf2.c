/*
 * PBKDF2-HMAC for one output block (RFC 8018 §5.2 with dkLen = hLen): SCRAM's Hi(), which the server runs for
 * every password it stores and every PLAIN login against stored SCRAM keys (RFC 5802 §2.2).
 *
 * Why not crypto.pbkdf2: OpenSSL 3's PBKDF2 runs its generic HMAC for each of the 4 096 rounds, and copying the
 * HMAC contexts costs as much as hashing (0.85 ms per SCRAM-SHA-1 derivation on our 2-vCPU VM, where the 8 192
 * compressions alone take 0.4 ms). Here the key's inner and outer pads are hashed once; each round is then one
 * compression from each saved state, with the round's single padded block built once (fastpbkdf2's method).
 * The compressions are OpenSSL's own (SHA1_Transform and its kin, exported by the node binary the addon is
 * loaded into), so the hashing is the code node:crypto runs, with its CPU-specific assembly.
 *
 * On a CPU with the SHA extensions, SHA-1's and SHA-256's rounds run on them instead (sha-ni.h), and two
 * derivations of one hash queued at the same time run together in one pool thread: a bulk registration or a wave
 * of PLAIN logins queues several at once. SHA-1: two interleaved cost 0.32 ms where one alone costs 0.28 (0.50
 * through SHA1_Transform); SHA-256: 0.30 ms alone (0.45). Without them, on AVX-512 or AVX2, up to eight queued
 * together run in the lanes of one set of vectors (sha-mb.h): on an Intel Xeon VM, SHA-1 0.14 ms each in full
 * batches against 1.0 through SHA1_Transform, SHA-256 0.30 against 2.0. So that batches form, a hash that runs
 * batched gets another piece of work beside a running one only when a full batch waits (see wants_work), and
 * while jobs come often a job short of a full batch waits a little for partners (see gather).
 *
 * JavaScript: derive(password: Uint8Array, salt: Uint8Array, iterations: number, hash: 0 | 1 | 2) returns a
 * Promise of a Buffer of the hash's length (0 = SHA-1, 1 = SHA-256, 2 = SHA-512). The derivation runs in libuv's
 * thread pool; it works on copies of password and salt, which it wipes, as it wipes every intermediate.
 * `implementation` says how SHA-1 and SHA-256 are computed here: 'sha-ni', 'avx512', 'avx2' or 'openssl'; the
 * environment variable SERVICE_PBKDF2_SHA names one of them instead (for tests and comparisons; see choose_path).
 * batches(hash) returns [pieces of work run, derivations they ran] for that hash: the batches' mean size.
 */
#include <node_api.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sha-mb.h"
#include "sha-ni.h"

#ifndef HAVE_SHA_MB /* not x86-64: OpenSSL's compressions only */
#define MB_LANES 1
enum { MB_NONE = 0, MB_AVX2 = 1, MB_AVX512 = 2 };
#endif

enum { HASH_SHA1 = 0, HASH_SHA256 = 1, HASH_SHA512 = 2 };

/* The longest digest and block of the three (SHA-512's). */
#define MAX_DIGEST 64
#define MAX_BLOCK 128

static void put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v) {
  put32(p, (uint32_t)(v >> 32));
  put32(p + 4, (uint32_t)v);
}

/* A context's chaining value, as the digest's bytes: what a compression of the last block leaves. */
static void sha1_state(const SHA_CTX *c, uint8_t *out) {
  put32(out, c->h0);
  put32(out + 4, c->h1);
  put32(out + 8, c->h2);
  put32(out + 12, c->h3);
  put32(out + 16, c->h4);
}

static void sha256_state(const SHA256_CTX *c, uint8_t *out) {
  for (int i = 0; i < 8; i++) put32(out + 4 * i, c->h[i]);
}

static void sha512_state(const SHA512_CTX *c, uint8_t *out) {
  for (int i = 0; i < 8; i++) put64(out + 8 * i, c->h[i]);
}

/*
 * One PBKDF2 per hash, from one body. START hashes the key's inner and outer pads (their states are what every
 * round starts from) and computes U1; the rounds after it are the same one-block layout for the inner and the
 * outer hash: DIGEST bytes, 0x80, zeros, and the message length in bits (BLOCK + DIGEST) at the end, big-endian.
 */
#define DEFINE_PBKDF2(NAME, START, CTX, DIGEST, BLOCK, PREFIX, STATE)                                          \
  static void START(const uint8_t *password, size_t password_len, const uint8_t *salt, size_t salt_len,      \
                    CTX *inner, CTX *outer, uint8_t *u1) {                                                   \
    static const uint8_t first_block_index[4] = {0, 0, 0, 1};                                                \
    uint8_t key[BLOCK], pad[BLOCK], block[DIGEST];                                                           \
    CTX c;                                                                                                   \
    memset(key, 0, sizeof key);                                                                              \
    if (password_len > BLOCK) {                                                                              \
      PREFIX##_Init(&c);                                                                                     \
      PREFIX##_Update(&c, password, password_len);                                                           \
      PREFIX##_Final(key, &c);                                                                               \
    } else if (password_len > 0) {                                                                           \
      memcpy(key, password, password_len);                                                                   \
    }                                                                                                        \
    for (size_t i = 0; i < BLOCK; i++) pad[i] = key[i] ^ 0x36;                                               \
    PREFIX##_Init(inner);                                                                                    \
    PREFIX##_Update(inner, pad, BLOCK);                                                                      \
    for (size_t i = 0; i < BLOCK; i++) pad[i] = key[i] ^ 0x5c;                                               \
    PREFIX##_Init(outer);                                                                                    \
    PREFIX##_Update(outer, pad, BLOCK);                                                                      \
    /* U1 = HMAC(password, salt || INT(1)), with the ordinary padding (the salt has any length). */          \
    c = *inner;                                                                                              \
    PREFIX##_Update(&c, salt, salt_len);                                                                     \
    PREFIX##_Update(&c, first_block_index, sizeof first_block_index);                                        \
    PREFIX##_Final(block, &c);                                                                               \
    c = *outer;                                                                                              \
    PREFIX##_Update(&c, block, DIGEST);                                                                      \
    PREFIX##_Final(u1, &c);                                                                                  \
    OPENSSL_cleanse(key, sizeof key);                                                                        \
    OPENSSL_cleanse(pad, sizeof pad);                                                                        \
    OPENSSL_cleanse(block, sizeof block);                                                                    \
    OPENSSL_cleanse(&c, sizeof c);                                                                           \
  }                                                                                                          \
  static void NAME(const uint8_t *password, size_t password_len, const uint8_t *salt, size_t salt_len,       \
                   uint32_t iterations, uint8_t *out) {                                                      \
    uint8_t block[BLOCK];                                                                                    \
    CTX inner, outer, c;                                                                                     \
    START(password, password_len, salt, salt_len, &inner, &outer, out);                                      \
    memset(block, 0, sizeof block);                                                                          \
    memcpy(block, out, DIGEST);                                                                              \
    /* Ui = HMAC(password, Ui-1): two compressions of the same one-block layout. */                          \
    block[DIGEST] = 0x80;                                                                                    \
    put64(block + BLOCK - 8, (uint64_t)(BLOCK + DIGEST) * 8);                                                \
    for (uint32_t round = 1; round < iterations; round++) {                                                  \
      c = inner;                                                                                             \
      PREFIX##_Transform(&c, block);                                                                         \
      STATE(&c, block);                                                                                      \
      c = outer;                                                                                             \
      PREFIX##_Transform(&c, block);                                                                         \
      STATE(&c, block);                                                                                      \
      for (size_t i = 0; i < DIGEST; i++) out[i] ^= block[i];                                                \
    }                                                                                                        \
    OPENSSL_cleanse(block, sizeof block);                                                                    \
    OPENSSL_cleanse(&inner, sizeof inner);                                                                   \
    OPENSSL_cleanse(&outer, sizeof outer);                                                                   \
    OPENSSL_cleanse(&c, sizeof c);                                                                           \
  }

DEFINE_PBKDF2(pbkdf2_sha1, sha1_start, SHA_CTX, 20, 64, SHA1, sha1_state)
DEFINE_PBKDF2(pbkdf2_sha256, sha256_start, SHA256_CTX, 32, 64, SHA256, sha256_state)
DEFINE_PBKDF2(pbkdf2_sha512, sha512_start, SHA512_CTX, 64, 128, SHA512, sha512_state)

static const size_t DIGEST_LENGTH[] = {20, 32, 64};

/* One derivation asked for from JavaScript, waiting in its environment's queue until a pool thread takes it. */
typedef struct Job {
  napi_deferred deferred;
  uint8_t *password;
  size_t password_len;
  uint8_t *salt;
  size_t salt_len;
  uint32_t iterations;
  int hash;
  uint8_t out[MAX_DIGEST];
  struct Job *next;
} Job;

/*
 * The derivations queued in one JavaScript environment (the main thread or a worker thread). Each piece of async
 * work is for one hash: when a pool thread runs it, it takes the oldest job of that hash and, where the CPU's path
 * runs several at once (lanes_for), more of the same round count. Per hash, at most POOL_THREADS pieces of work are
 * queued or running (see wants_work), and each one's completion starts the next while jobs of its hash wait. Where
 * derivations run together, a piece starts beside a running one only when a full batch waits: the jobs that arrive
 * while a batch runs gather and run as the next batch (eight SHA-1 derivations on AVX-512 cost about what one
 * costs), a lone job starts at once, and a burst still reaches every core. A piece of work may find no job (an
 * earlier one took it).
 */
typedef struct {
  pthread_mutex_t lock;
  Job *head;
  Job *tail;
  /* Pieces of work queued or running, per hash (at most POOL_THREADS). */
  unsigned running[3];
  /* Jobs queued and not yet taken, per hash. */
  unsigned waiting[3];
  /* Signalled when a job joins, for a piece of work gathering a batch (see gather). */
  pthread_cond_t arrived;
  /*
   * Per hash, after waits for partners that ended alone: how many lone jobs run at once before the next wait
   * (skip), and how many the last such wait earned (backoff, doubling to MAX_BACKOFF). See gather.
   */
  unsigned skip[3];
  unsigned backoff[3];
  /* When the last job of each hash was queued (CLOCK_MONOTONIC, ns), and the mean gap between its jobs (see gap). */
  uint64_t last_arrival[3];
  uint64_t gap_ns[3];
  /* Pieces of work that ran, and the derivations they ran, per hash: the batches' mean size (binding.batches()). */
  uint64_t pieces[3];
  uint64_t derived[3];
  /* The environment's hold and each piece of work's: a pool thread may still run work while the environment goes. */
  unsigned refs;
} Queue;

/*
 * A job alone on a vector path waits for partners while its hash's jobs come often: until a full batch is there, or
 * for as long as the mean gap between jobs says a full batch takes to come, at most GATHER_NS. A batch of eight costs
 * about what one derivation does (SHA-1 on an Intel Xeon VM: 1.5 ms either way), so each partner found is a
 * derivation for nothing. A worker carrying the kit's PLAIN logins queues one every 3-5 ms: a wait of 3 ms for the
 * first partner gave batches of two or three (0.6-0.8 ms of CPU per derivation); waiting for more gives four to
 * six. When jobs come less often than one per GATHER_NS (an idle server, a login now and then), a lone job runs at
 * once; under load a login waits at most GATHER_NS more, next to the hundreds of milliseconds it queues for anyway.
 */
#define GATHER_NS 16000000u
/* The most lone jobs that run at once between two waits for partners that end alone (see gather). */
#define MAX_BACKOFF 64u
/* A gap longer than this counts as this long, so that the mean recovers within a few jobs after an idle spell. */
#define GAP_CAP_NS 100000000u

/* libuv's thread pool's default size: no cap for a hash whose derivations run one at a time. */
#define POOL_THREADS 4

/* The most derivations one piece of work runs at once (sha-mb.h's lanes; SHA-NI pairs two). */
#define MAX_LANES 8

/* One piece of async work and the jobs it took (none if it found the queue empty or never ran). */
typedef struct {
  napi_async_work work;
  Queue *queue;
  int hash;
  Job *jobs[MAX_LANES];
  int count;
} Work;

/* How SHA-1 and SHA-256 rounds run, chosen once at load from the CPU (and SERVICE_PBKDF2_SHA). */
enum { PATH_OPENSSL = 0, PATH_SHA_NI, PATH_AVX2, PATH_AVX512 };
static const char *const PATH_NAME[] = {"openssl", "sha-ni", "avx2", "avx512"};
/* Derivations of one hash and round count that one piece of work runs together, per path. */
static const int PATH_LANES[] = {1, 2, MB_LANES, MB_LANES};
static int sha_path = -1;

static void free_job(Job *job) {
  if (job->password) {
    OPENSSL_cleanse(job->password, job->password_len);
    free(job->password);
  }
  free(job->salt);
  OPENSSL_cleanse(job->out, sizeof job->out);
  free(job);
}

/* Removes and returns the oldest job that `wanted` accepts of `like` (NULL: any job); the caller holds the lock. */
static Job *take(Queue *queue, int (*wanted)(const Job *, const Job *), const Job *like) {
  Job *previous = NULL;
  for (Job *job = queue->head; job; previous = job, job = job->next) {
    if (wanted && !wanted(job, like)) continue;
    if (previous) previous->next = job->next; else queue->head = job->next;
    if (queue->tail == job) queue->tail = previous;
    job->next = NULL;
    queue->waiting[job->hash]--;
    return job;
  }
  return NULL;
}

static int same_hash(const Job *job, const Job *like) {
  return job->hash == like->hash;
}

static int pairs_with(const Job *job, const Job *first) {
  return job->hash == first->hash && job->iterations == first->iterations;
}

#if defined(HAVE_SHA_NI) && defined(HAVE_SHA_MB)
static void sha1_words(const SHA_CTX *c, uint32_t h[5]) {
  h[0] = c->h0; h[1] = c->h1; h[2] = c->h2; h[3] = c->h3; h[4] = c->h4;
}

static void sha256_words(const SHA256_CTX *c, uint32_t h[8]) {
  for (int i = 0; i < 8; i++) h[i] = c->h[i];
}

/*
 * `count` derivations of one hash with the same round count, together: each key's pad states and U1 from OpenSSL
 * (START), the rounds after U1 by ROUNDS (SHA-NI's or sha-mb.h's, in vector registers), WORDS words of digest.
 */
#define DEFINE_BATCHED_PBKDF2(NAME, START, CTX, WORDS, WORDS_OF, ROUNDS)                                         \
  static void NAME(Job **jobs, int count) {                                                                     \
    uint32_t inner[MAX_LANES][WORDS], outer[MAX_LANES][WORDS], u1[MAX_LANES][WORDS], t[MAX_LANES][WORDS];       \
    CTX inner_ctx, outer_ctx;                                                                                   \
    uint8_t first[4 * WORDS];                                                                                   \
    for (int k = 0; k < count; k++) {                                                                           \
      START(jobs[k]->password, jobs[k]->password_len, jobs[k]->salt, jobs[k]->salt_len, &inner_ctx, &outer_ctx, first); \
      WORDS_OF(&inner_ctx, inner[k]);                                                                           \
      WORDS_OF(&outer_ctx, outer[k]);                                                                           \
      for (int i = 0; i < WORDS; i++) {                                                                         \
        u1[k][i] = (uint32_t)first[4 * i] << 24 | (uint32_t)first[4 * i + 1] << 16 | (uint32_t)first[4 * i + 2] << 8 | first[4 * i + 3]; \
      }                                                                                                         \
    }                                                                                                           \
    ROUNDS(count, (const uint32_t (*)[WORDS])inner, (const uint32_t (*)[WORDS])outer, (const uint32_t (*)[WORDS])u1, jobs[0]->iterations, t); \
    for (int k = 0; k < count; k++) {                                                                           \
      for (int i = 0; i < WORDS; i++) put32(jobs[k]->out + 4 * i, t[k][i]);                                     \
    }                                                                                                           \
    OPENSSL_cleanse(inner, sizeof inner);                                                                       \
    OPENSSL_cleanse(outer, sizeof outer);                                                                       \
    OPENSSL_cleanse(u1, sizeof u1);                                                                             \
    OPENSSL_cleanse(t, sizeof t);                                                                               \
    OPENSSL_cleanse(&inner_ctx, sizeof inner_ctx);                                                              \
    OPENSSL_cleanse(&outer_ctx, sizeof outer_ctx);                                                              \
    OPENSSL_cleanse(first, sizeof first);                                                                       \
  }

DEFINE_BATCHED_PBKDF2(pbkdf2_sha1_shani, sha1_start, SHA_CTX, 5, sha1_words, shani_pbkdf2_rounds)
DEFINE_BATCHED_PBKDF2(pbkdf2_sha256_shani, sha256_start, SHA256_CTX, 8, sha256_words, shani256_pbkdf2_rounds)
DEFINE_BATCHED_PBKDF2(pbkdf2_sha1_avx2, sha1_start, SHA_CTX, 5, sha1_words, mb_sha1_pbkdf2_rounds_avx2)
DEFINE_BATCHED_PBKDF2(pbkdf2_sha256_avx2, sha256_start, SHA256_CTX, 8, sha256_words, mb_sha256_pbkdf2_rounds_avx2)
DEFINE_BATCHED_PBKDF2(pbkdf2_sha1_avx512, sha1_start, SHA_CTX, 5, sha1_words, mb_sha1_pbkdf2_rounds_avx512)
DEFINE_BATCHED_PBKDF2(pbkdf2_sha256_avx512, sha256_start, SHA256_CTX, 8, sha256_words, mb_sha256_pbkdf2_rounds_avx512)

/* The batched derivations of each path, for SHA-1 and SHA-256 (SHA-512 has no vector path here). */
static void (*const BATCHED[][2])(Job **, int) = {
  [PATH_SHA_NI] = {pbkdf2_sha1_shani, pbkdf2_sha256_shani},
  [PATH_AVX2] = {pbkdf2_sha1_avx2, pbkdf2_sha256_avx2},
  [PATH_AVX512] = {pbkdf2_sha1_avx512, pbkdf2_sha256_avx512},
};
#endif

/*
 * The fastest path this CPU has: SHA-NI, then AVX-512VL, then AVX2, then OpenSSL's compressions.
 * SERVICE_PBKDF2_SHA names one instead (for tests and comparisons): openssl, sha-ni, avx2 or avx512; one the CPU
 * lacks gives openssl.
 */
static int choose_path(const char *forced) {
  int sha_ni = 0, mb = 0;
#if defined(HAVE_SHA_NI) && defined(HAVE_SHA_MB)
  sha_ni = cpu_has_sha_ni();
  mb = cpu_mb_level();
#endif
  if (forced && *forced) {
    if (strcmp(forced, "sha-ni") == 0 && sha_ni) return PATH_SHA_NI;
    if (strcmp(forced, "avx512") == 0 && mb >= MB_AVX512) return PATH_AVX512;
    if (strcmp(forced, "avx2") == 0 && mb >= MB_AVX2) return PATH_AVX2;
    return PATH_OPENSSL;
  }
  if (sha_ni) return PATH_SHA_NI;
  if (mb >= MB_AVX512) return PATH_AVX512;
  if (mb >= MB_AVX2) return PATH_AVX2;
  return PATH_OPENSSL;
}

/* How many derivations of `hash` one piece of work takes together on this CPU. */
static int lanes_for(int hash) {
  return hash == HASH_SHA512 ? 1 : PATH_LANES[sha_path];
}

/*
 * Whether a job of `hash` just queued should start another piece of work; the caller holds the lock. Always when
 * none runs; else, while the pool has threads, at once where derivations run one at a time, and where they run
 * together only when a full batch waits: a smaller one gathers for the next batch of a running piece (on AVX-512,
 * a batch of eight costs about what one derivation does). A cap of one piece was tried first: bulk work then used
 * one core per process (on an AMD EPYC with SHA-NI, 64 SHA-1 derivations in flight ran at 0.82 of a core).
 */
static int wants_work(const Queue *queue, int hash) {
  const unsigned running = queue->running[hash], lanes = (unsigned)lanes_for(hash);
  return running == 0 || (running < POOL_THREADS && (lanes == 1 || queue->waiting[hash] >= lanes));
}

static uint64_t monotonic_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Adds to `work` the jobs that pair with its first, up to `lanes`; the caller holds the lock. */
static void take_partners(Queue *queue, Work *work, int lanes) {
  while (work->count < lanes && (work->jobs[work->count] = take(queue, pairs_with, work->jobs[0])) != NULL) work->count++;
}

/*
 * Counts a job of `hash` queued at `now` in the mean gap between its jobs: a moving average over about the last
 * four, so that it follows a wave of logins within a few jobs; the caller holds the lock.
 */
static void count_arrival(Queue *queue, int hash, uint64_t now) {
  const uint64_t last = queue->last_arrival[hash];
  const uint64_t gap = last == 0 || now - last > GAP_CAP_NS ? GAP_CAP_NS : now - last;
  queue->gap_ns[hash] = last == 0 ? gap : (queue->gap_ns[hash] * 3 + gap) / 4;
  queue->last_arrival[hash] = now;
}

/*
 * A job of a vector path short of a full batch, while its hash's jobs come often: waits (holding no CPU) until the
 * batch is full or its time is up (GATHER_NS above), taking partners as they join. Not on SHA-NI, where a lone
 * derivation is already fast (0.28 ms). The caller holds the lock, which the wait releases.
 *
 * Jobs that come one after another, each queued once the last is done (a script's check_password or register loop),
 * come often but never together: every wait found no partner and cost its full time (14 ms per derivation in such a
 * loop on an AMD EPYC's AVX-512 and AVX2 paths, 0.6 without). So a wait that ends alone lets the next lone jobs run
 * at once, one, then two, four... up to MAX_BACKOFF of them between waits, until a wait finds a partner or a job
 * comes while another of its hash is queued or runs (derive). Jobs that come a few milliseconds apart without
 * waiting for each other still gather: the first wait after the run-at-once ones finds partners.
 */
static void gather(Queue *queue, Work *work, int lanes) {
  const int hash = work->hash;
  const uint64_t gap = queue->gap_ns[hash];
  if (work->count >= lanes || lanes < 2 || sha_path == PATH_SHA_NI || gap >= GATHER_NS) return;
  if (queue->skip[hash] > 0) {
    queue->skip[hash]--;
    return;
  }
  const uint64_t full = gap * (uint64_t)(lanes - work->count);
  const uint64_t deadline = monotonic_ns() + (full < GATHER_NS ? full : GATHER_NS);
  const struct timespec until = {.tv_sec = (time_t)(deadline / 1000000000u), .tv_nsec = (long)(deadline % 1000000000u)};
  while (work->count < lanes) {
    const int waited = pthread_cond_timedwait(&queue->arrived, &queue->lock, &until);
    take_partners(queue, work, lanes);
    if (waited == ETIMEDOUT) break;
  }
  if (work->count > 1) {
    queue->backoff[hash] = 0;
    return;
  }
  const unsigned doubled = queue->backoff[hash] * 2;
  queue->backoff[hash] = doubled == 0 ? 1 : doubled < MAX_BACKOFF ? doubled : MAX_BACKOFF;
  queue->skip[hash] = queue->backoff[hash];
}

/* The derivations `work` took, on this CPU's path. */
static void run(Work *work) {
  Job *job = work->jobs[0];
#if defined(HAVE_SHA_NI) && defined(HAVE_SHA_MB)
  /* One job alone runs on OpenSSL's compressions, except on SHA-NI: eight lanes cost about what one derivation does. */
  if (sha_path != PATH_OPENSSL && job->hash != HASH_SHA512 && (sha_path == PATH_SHA_NI || work->count > 1)) {
    BATCHED[sha_path][job->hash](work->jobs, work->count);
    return;
  }
#endif
  switch (job->hash) {
    case HASH_SHA1:
      pbkdf2_sha1(job->password, job->password_len, job->salt, job->salt_len, job->iterations, job->out);
      break;
    case HASH_SHA256:
      pbkdf2_sha256(job->password, job->password_len, job->salt, job->salt_len, job->iterations, job->out);
      break;
    default:
      pbkdf2_sha512(job->password, job->password_len, job->salt, job->salt_len, job->iterations, job->out);
      break;
  }
}

/* In a thread of libuv's pool: no JavaScript here. */
static void execute(napi_env env, void *data) {
  (void)env;
  Work *work = data;
  Queue *queue = work->queue;
  pthread_mutex_lock(&queue->lock);
  const Job like = {.hash = work->hash};
  work->jobs[0] = take(queue, same_hash, &like);
  work->count = work->jobs[0] ? 1 : 0;
  if (work->count == 1) {
    const int lanes = lanes_for(work->hash);
    take_partners(queue, work, lanes);
    gather(queue, work, lanes);
  }
  pthread_mutex_unlock(&queue->lock);
  if (work->count == 0) return;
  run(work);
  pthread_mutex_lock(&queue->lock);
  queue->pieces[work->hash]++;
  queue->derived[work->hash] += (uint64_t)work->count;
  pthread_mutex_unlock(&queue->lock);
}

/* Lets go of one hold on the queue; the last frees it. */
static void release(Queue *queue) {
  pthread_mutex_lock(&queue->lock);
  int last = --queue->refs == 0;
  pthread_mutex_unlock(&queue->lock);
  if (last) {
    pthread_cond_destroy(&queue->arrived);
    pthread_mutex_destroy(&queue->lock);
    free(queue);
  }
}

static void reject(napi_env env, Job *job) {
  napi_value message, error;
  napi_create_string_utf8(env, "PBKDF2 derivation failed", NAPI_AUTO_LENGTH, &message);
  napi_create_error(env, NULL, message, &error);
  napi_reject_deferred(env, job->deferred, error);
}

static void complete(napi_env env, napi_status status, void *data);

/* Queues a piece of work for `hash`, which its caller has counted in `running`; false if napi could not. */
static int start_work(napi_env env, Queue *queue, int hash) {
  Work *work = calloc(1, sizeof *work);
  if (!work) return 0;
  work->queue = queue;
  work->hash = hash;
  napi_value name;
  if (napi_create_string_utf8(env, "pbkdf2", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, execute, complete, work, &work->work) != napi_ok) {
    free(work);
    return 0;
  }
  pthread_mutex_lock(&queue->lock);
  queue->refs++;
  pthread_mutex_unlock(&queue->lock);
  if (napi_queue_async_work(env, work->work) != napi_ok) {
    napi_delete_async_work(env, work->work);
    release(queue);
    free(work);
    return 0;
  }
  return 1;
}

/* A piece of work ended without a successor, or could not start: when none is left for its hash, those jobs fail. */
static void stop_work(napi_env env, Queue *queue, int hash) {
  const Job like = {.hash = hash};
  pthread_mutex_lock(&queue->lock);
  const int last = --queue->running[hash] == 0;
  pthread_mutex_unlock(&queue->lock);
  while (last) {
    pthread_mutex_lock(&queue->lock);
    Job *orphan = take(queue, same_hash, &like);
    pthread_mutex_unlock(&queue->lock);
    if (!orphan) break;
    reject(env, orphan);
    free_job(orphan);
  }
}

/*
 * On the JavaScript thread: settles the jobs this work took (none if it was cancelled before it ran), then starts
 * the next piece of work if jobs are waiting.
 */
static void complete(napi_env env, napi_status status, void *data) {
  Work *work = data;
  Queue *queue = work->queue;
  const Job like = {.hash = work->hash};
  for (int k = 0; k < work->count; k++) {
    Job *job = work->jobs[k];
    napi_value result;
    if (status == napi_ok && napi_create_buffer_copy(env, DIGEST_LENGTH[job->hash], job->out, NULL, &result) == napi_ok) {
      napi_resolve_deferred(env, job->deferred, result);
    } else {
      reject(env, job);
    }
    free_job(job);
  }
  napi_delete_async_work(env, work->work);
  free(work);
  pthread_mutex_lock(&queue->lock);
  const int waiting = queue->waiting[like.hash] > 0;
  pthread_mutex_unlock(&queue->lock);
  if (!waiting || status != napi_ok || !start_work(env, queue, like.hash)) stop_work(env, queue, like.hash);
  release(queue);
}

/* The environment is going away: the jobs left in its queue (their promises die with it), and its hold. */
static void free_queue(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  Queue *queue = data;
  pthread_mutex_lock(&queue->lock);
  for (Job *job = take(queue, NULL, NULL); job; job = take(queue, NULL, NULL)) free_job(job);
  pthread_mutex_unlock(&queue->lock);
  release(queue);
}

/* A copy of a Buffer or Uint8Array argument's bytes (never NULL, even when empty); false if it is neither. */
static int copy_bytes(napi_env env, napi_value value, uint8_t **bytes, size_t *length) {
  bool is_typed_array = false;
  if (napi_is_typedarray(env, value, &is_typed_array) != napi_ok || !is_typed_array) return 0;
  napi_typedarray_type type;
  void *data;
  size_t count, offset;
  napi_value array_buffer;
  if (napi_get_typedarray_info(env, value, &type, &count, &data, &array_buffer, &offset) != napi_ok) return 0;
  if (type != napi_uint8_array) return 0;
  *bytes = malloc(count > 0 ? count : 1);
  if (!*bytes) return 0;
  if (count > 0) memcpy(*bytes, data, count);
  *length = count;
  return 1;
}

static napi_value fail(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return NULL;
}

static napi_value derive(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 4) {
    return fail(env, "derive(password, salt, iterations, hash) takes four arguments");
  }
  double rounds;
  int32_t hash;
  /* node:crypto's bounds: 1 to 2^31 - 1, a whole number (napi's uint32 reading would truncate 1.5 or wrap 2^32). */
  if (napi_get_value_double(env, argv[2], &rounds) != napi_ok || !(rounds >= 1 && rounds <= 2147483647.0) || rounds != (double)(uint32_t)rounds) {
    return fail(env, "the iteration count must be an integer from 1 to 2147483647");
  }
  uint32_t iterations = (uint32_t)rounds;
  if (napi_get_value_int32(env, argv[3], &hash) != napi_ok || hash < HASH_SHA1 || hash > HASH_SHA512) {
    return fail(env, "the hash must be 0 (SHA-1), 1 (SHA-256) or 2 (SHA-512)");
  }
  Queue *queue;
  if (napi_get_instance_data(env, (void **)&queue) != napi_ok || !queue) return fail(env, "the addon is not initialised");
  Job *job = calloc(1, sizeof *job);
  if (!job) return fail(env, "out of memory");
  job->iterations = iterations;
  job->hash = hash;
  if (!copy_bytes(env, argv[0], &job->password, &job->password_len)) {
    free_job(job);
    return fail(env, "the password must be a Buffer or Uint8Array");
  }
  if (!copy_bytes(env, argv[1], &job->salt, &job->salt_len)) {
    free_job(job);
    return fail(env, "the salt must be a Buffer or Uint8Array");
  }
  napi_value promise;
  if (napi_create_promise(env, &job->deferred, &promise) != napi_ok) {
    free_job(job);
    napi_throw_error(env, NULL, "cannot queue the PBKDF2 derivation");
    return NULL;
  }
  pthread_mutex_lock(&queue->lock);
  if (queue->tail) queue->tail->next = job; else queue->head = job;
  queue->tail = job;
  /* Another job of its hash queued or running: derivations overlap, a wait for partners can find some (gather). */
  if (queue->running[hash] > 0 || queue->waiting[hash] > 0) queue->skip[hash] = queue->backoff[hash] = 0;
  queue->waiting[hash]++;
  count_arrival(queue, hash, monotonic_ns());
  const int start = wants_work(queue, hash);
  if (start) queue->running[hash]++;
  pthread_cond_signal(&queue->arrived);
  pthread_mutex_unlock(&queue->lock);
  /* Only this thread starts and stops work, so `running` cannot drop to zero between the lock and here. */
  if (start && !start_work(env, queue, hash)) stop_work(env, queue, hash);
  return promise;
}

/* batches(hash): [pieces of work that ran, derivations they ran] for hash 0, 1 or 2 in this environment (for tests). */
static napi_value batches(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t hash;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 1 || napi_get_value_int32(env, argv[0], &hash) != napi_ok ||
      hash < HASH_SHA1 || hash > HASH_SHA512) {
    return fail(env, "batches(hash) takes a hash: 0 (SHA-1), 1 (SHA-256) or 2 (SHA-512)");
  }
  Queue *queue;
  if (napi_get_instance_data(env, (void **)&queue) != napi_ok || !queue) return fail(env, "the addon is not initialised");
  pthread_mutex_lock(&queue->lock);
  const double counts[2] = {(double)queue->pieces[hash], (double)queue->derived[hash]};
  pthread_mutex_unlock(&queue->lock);
  napi_value array, number;
  if (napi_create_array_with_length(env, 2, &array) != napi_ok) return NULL;
  for (uint32_t i = 0; i < 2; i++) {
    if (napi_create_double(env, counts[i], &number) != napi_ok || napi_set_element(env, array, i, number) != napi_ok) return NULL;
  }
  return array;
}

NAPI_MODULE_INIT() {
  if (sha_path < 0) sha_path = choose_path(getenv("SERVICE_PBKDF2_SHA"));
  const char *implementation = PATH_NAME[sha_path];
  Queue *queue = calloc(1, sizeof *queue);
  if (queue) queue->refs = 1;
  if (!queue || pthread_mutex_init(&queue->lock, NULL) != 0) {
    free(queue);
    return NULL;
  }
  pthread_condattr_t monotonic;
  int cond_ready = pthread_condattr_init(&monotonic) == 0;
  if (cond_ready) {
    cond_ready = pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&queue->arrived, &monotonic) == 0;
    pthread_condattr_destroy(&monotonic);
  }
  if (!cond_ready || napi_set_instance_data(env, queue, free_queue, NULL) != napi_ok) {
    if (cond_ready) pthread_cond_destroy(&queue->arrived);
    pthread_mutex_destroy(&queue->lock);
    free(queue);
    return NULL;
  }
  napi_value fn, name;
  if (napi_create_string_utf8(env, implementation, NAPI_AUTO_LENGTH, &name) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "implementation", name) != napi_ok) return NULL;
  if (napi_create_function(env, "derive", NAPI_AUTO_LENGTH, derive, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "derive", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "batches", NAPI_AUTO_LENGTH, batches, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "batches", fn) != napi_ok) return NULL;
  return exports;
}
