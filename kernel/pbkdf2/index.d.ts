/** The hashes SCRAM uses, by node:crypto's names. */
export type Pbkdf2Hash = 'sha1' | 'sha256' | 'sha512';

/**
 * One output block of PBKDF2-HMAC-`hash` (as long as the hash's digest), derived in libuv's thread pool; the
 * same bytes as `crypto.pbkdf2(password, salt, iterations, digestLength, hash)`. Undefined when the addon is not
 * built (then `nativePbkdf2Problem` says why).
 */
export declare const nativePbkdf2:
  | ((password: Uint8Array, salt: Uint8Array, iterations: number, hash: Pbkdf2Hash) => Promise<Buffer>)
  | undefined;

/** Why the addon could not be loaded, or undefined when it is. */
export declare const nativePbkdf2Problem: string | undefined;

/**
 * How SHA-1 and SHA-256 derivations run here: 'sha-ni' (the x86 SHA extensions, two derivations queued together run
 * together), 'avx512' or 'avx2' (up to eight queued together, one per vector lane; a lone one on OpenSSL's code),
 * 'openssl' (OpenSSL's compressions), or undefined when the addon is not built.
 */
export declare const nativePbkdf2Sha: 'sha-ni' | 'avx512' | 'avx2' | 'openssl' | undefined;
