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
 * JavaScript: derive(password: Uint8Array, salt: Uint8Array, iterations: number, hash: 0 | 1 | 2) returns a
 * Promise of a Buffer of the hash's length (0 = SHA-1, 1 = SHA-256, 2 = SHA-512). The derivation runs in libuv's
 * thread pool; it works on copies of password and salt, which it wipes, as it wipes every intermediate.
 */
#include <node_api.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
 * One PBKDF2 per hash, from one body. In every round after the first, both the inner and the outer hash read
 * a message of one block (the pad) and then DIGEST bytes, so their second block is the same layout: the bytes,
 * 0x80, zeros, and the message length in bits (BLOCK + DIGEST) at the end, big-endian.
 */
#define DEFINE_PBKDF2(NAME, CTX, DIGEST, BLOCK, PREFIX, STATE)                                                 \
  static void NAME(const uint8_t *password, size_t password_len, const uint8_t *salt, size_t salt_len,       \
                   uint32_t iterations, uint8_t *out) {                                                      \
    static const uint8_t first_block_index[4] = {0, 0, 0, 1};                                                \
    uint8_t key[BLOCK], pad[BLOCK], block[BLOCK];                                                            \
    CTX inner, outer, c;                                                                                     \
    memset(key, 0, sizeof key);                                                                              \
    if (password_len > BLOCK) {                                                                              \
      PREFIX##_Init(&c);                                                                                     \
      PREFIX##_Update(&c, password, password_len);                                                           \
      PREFIX##_Final(key, &c);                                                                               \
    } else if (password_len > 0) {                                                                           \
      memcpy(key, password, password_len);                                                                   \
    }                                                                                                        \
    for (size_t i = 0; i < BLOCK; i++) pad[i] = key[i] ^ 0x36;                                               \
    PREFIX##_Init(&inner);                                                                                   \
    PREFIX##_Update(&inner, pad, BLOCK);                                                                     \
    for (size_t i = 0; i < BLOCK; i++) pad[i] = key[i] ^ 0x5c;                                               \
    PREFIX##_Init(&outer);                                                                                   \
    PREFIX##_Update(&outer, pad, BLOCK);                                                                     \
    /* U1 = HMAC(password, salt || INT(1)), with the ordinary padding (the salt has any length). */          \
    memset(block, 0, sizeof block);                                                                          \
    c = inner;                                                                                               \
    PREFIX##_Update(&c, salt, salt_len);                                                                     \
    PREFIX##_Update(&c, first_block_index, sizeof first_block_index);                                        \
    PREFIX##_Final(block, &c);                                                                               \
    c = outer;                                                                                               \
    PREFIX##_Update(&c, block, DIGEST);                                                                      \
    PREFIX##_Final(block, &c);                                                                               \
    memcpy(out, block, DIGEST);                                                                              \
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
    OPENSSL_cleanse(key, sizeof key);                                                                        \
    OPENSSL_cleanse(pad, sizeof pad);                                                                        \
    OPENSSL_cleanse(block, sizeof block);                                                                    \
    OPENSSL_cleanse(&inner, sizeof inner);                                                                   \
    OPENSSL_cleanse(&outer, sizeof outer);                                                                   \
    OPENSSL_cleanse(&c, sizeof c);                                                                           \
  }

DEFINE_PBKDF2(pbkdf2_sha1, SHA_CTX, 20, 64, SHA1, sha1_state)
DEFINE_PBKDF2(pbkdf2_sha256, SHA256_CTX, 32, 64, SHA256, sha256_state)
DEFINE_PBKDF2(pbkdf2_sha512, SHA512_CTX, 64, 128, SHA512, sha512_state)

static const size_t DIGEST_LENGTH[] = {20, 32, 64};

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  uint8_t *password;
  size_t password_len;
  uint8_t *salt;
  size_t salt_len;
  uint32_t iterations;
  int hash;
  uint8_t out[MAX_DIGEST];
} Job;

static void free_job(Job *job) {
  if (job->password) {
    OPENSSL_cleanse(job->password, job->password_len);
    free(job->password);
  }
  free(job->salt);
  OPENSSL_cleanse(job->out, sizeof job->out);
  free(job);
}

/* In a thread of libuv's pool: no JavaScript here. */
static void execute(napi_env env, void *data) {
  (void)env;
  Job *job = data;
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

static void complete(napi_env env, napi_status status, void *data) {
  Job *job = data;
  napi_value result;
  if (status == napi_ok && napi_create_buffer_copy(env, DIGEST_LENGTH[job->hash], job->out, NULL, &result) == napi_ok) {
    napi_resolve_deferred(env, job->deferred, result);
  } else {
    napi_value message, error;
    napi_create_string_utf8(env, "PBKDF2 derivation failed", NAPI_AUTO_LENGTH, &message);
    napi_create_error(env, NULL, message, &error);
    napi_reject_deferred(env, job->deferred, error);
  }
  napi_delete_async_work(env, job->work);
  free_job(job);
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
  napi_value name, promise;
  if (napi_create_string_utf8(env, "pbkdf2", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, execute, complete, job, &job->work) != napi_ok) {
    free_job(job);
    napi_throw_error(env, NULL, "cannot create the PBKDF2 derivation");
    return NULL;
  }
  if (napi_create_promise(env, &job->deferred, &promise) != napi_ok || napi_queue_async_work(env, job->work) != napi_ok) {
    /* A deferred created here is left pending with its promise, which nobody receives. */
    napi_delete_async_work(env, job->work);
    free_job(job);
    napi_throw_error(env, NULL, "cannot queue the PBKDF2 derivation");
    return NULL;
  }
  return promise;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "derive", NAPI_AUTO_LENGTH, derive, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "derive", fn) != napi_ok) return NULL;
  return exports;
}
