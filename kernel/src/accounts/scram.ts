/**
 * SCRAM credentials (RFC 5802, RFC 7677, and SCRAM-SHA-512): what the server stores instead of a
 * password, and what SASL needs to authenticate a client without ever seeing the password again.
 */
import { nativePbkdf2, nativePbkdf2Problem, nativePbkdf2Sha } from '@service/pbkdf2';
import { createHmac, hash as oneShotHash, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { ScramHash } from '@service/plugin-api';
import { saslprepMap, saslprepProblem, type SaslprepUse } from './saslprep.js';

export type { ScramHash } from '@service/plugin-api';
export const SCRAM_HASHES = ['sha1', 'sha256', 'sha512'] as const satisfies readonly ScramHash[];

/** Output length in bytes of each hash, which is also the length of every SCRAM key. */
export const SCRAM_KEY_LENGTH: Readonly<Record<ScramHash, number>> = { sha1: 20, sha256: 32, sha512: 64 };
export const DEFAULT_SCRAM_ITERATIONS = 4096;
export const SCRAM_SALT_BYTES = 16;

export interface ScramKeys {
  /** H(ClientKey): checks a client's proof. */
  storedKey: Buffer;
  /** HMAC(SaltedPassword, "Server Key"): signs the server's final message. */
  serverKey: Buffer;
}

/** Everything SASL needs for one hash: sent to the client (salt, iterations) or kept (keys). */
export interface ScramCredential extends ScramKeys {
  salt: Buffer;
  iterations: number;
}

/** One salt and iteration count shared by the keys of every hash, as stored for an account. */
export interface ScramCredentials {
  salt: Buffer;
  iterations: number;
  /** Accounts imported from elsewhere may carry only some hashes. */
  keys: Partial<Record<ScramHash, ScramKeys>>;
}

/** When the caller does not name a hash, verification uses the first one stored, in this order. */
const VERIFY_PREFERENCE: readonly ScramHash[] = ['sha256', 'sha512', 'sha1'];

const pbkdf2Async = promisify(pbkdf2);

/**
 * Which PBKDF2 derives SCRAM keys here: the kernel's native one (@service/pbkdf2: OpenSSL's compressions
 * with the HMAC pads hashed once, about twice as fast; SHA-1 and SHA-256 on the CPU's SHA extensions where it has them,
 * or up to eight derivations at once on AVX-512 or AVX2 vectors),
 * or node:crypto's when that addon was not built, with the reason. Both run in libuv's thread pool and give
 * the same bytes.
 */
export const PBKDF2_IMPLEMENTATION: { readonly name: 'native' | 'node:crypto'; readonly sha?: 'sha-ni' | 'avx512' | 'avx2' | 'openssl'; readonly problem?: string } = nativePbkdf2
  ? { name: 'native', sha: nativePbkdf2Sha }
  : { name: 'node:crypto', problem: nativePbkdf2Problem };

/**
 * A password as SCRAM hashes it and PLAIN compares it: SASLprep's mapping and NFKC (RFC 4013 §2.1-2.2, see
 * saslprep.ts). Never fails, so that a password stored before SASLprep was enforced can still be compared;
 * whether SASLprep allows the password at all is `passwordProhibition`'s question.
 *
 * Keys stored before SASLprep were derived from NFKC alone: a password with a B.1 character (soft hyphen,
 * zero-width joiners, variation selectors) or a space NFKC keeps (U+1680, U+200B) no longer matches them.
 */
export function normalizePassword(password: string): string {
  return saslprepMap(password);
}

/**
 * What SASLprep prohibits in `password` (control and private-use characters, noncharacters, bidi
 * violations...; unassigned code points in a password being stored), or that it prepares to nothing, phrased
 * to follow "password", or undefined. A prohibited password is refused when set, and never logs in.
 */
export function passwordProhibition(password: string, use: SaslprepUse): string | undefined {
  const prepared = saslprepMap(password);
  if (prepared === '' && password !== '') return 'is empty after SASLprep (it holds only characters SASLprep maps to nothing)';
  return saslprepProblem(prepared, use);
}

export function scramHmac(hash: ScramHash, key: Buffer, data: string | Buffer): Buffer {
  return createHmac(hash, key).update(data).digest();
}

export function scramDigest(hash: ScramHash, data: Buffer): Buffer {
  // One-shot: no Hash object (1.8 µs against 3.2 for a short input here).
  return oneShotHash(hash, data, 'buffer');
}

/** SaltedPassword = Hi(Normalize(password), salt, i), computed off the event loop; Normalize is `normalizePassword`. */
export async function saltPassword(password: string, salt: Buffer, iterations: number, hash: ScramHash): Promise<Buffer> {
  if (!Number.isSafeInteger(iterations) || iterations < 1) {
    throw new RangeError(`SCRAM iteration count must be a positive integer, got ${iterations}`);
  }
  const normalized = normalizePassword(password);
  // Past 2^31 - 1 rounds node:crypto's RangeError answers (the addon counts in 32 bits).
  if (nativePbkdf2 && iterations <= 0x7fffffff) return nativePbkdf2(Buffer.from(normalized, 'utf8'), salt, iterations, hash);
  return pbkdf2Async(normalized, salt, iterations, SCRAM_KEY_LENGTH[hash], hash);
}

/** The keys a server keeps for one hash, from the salted password. */
export function scramKeysOf(saltedPassword: Buffer, hash: ScramHash): ScramKeys {
  const clientKey = scramHmac(hash, saltedPassword, 'Client Key');
  return {
    storedKey: scramDigest(hash, clientKey),
    serverKey: scramHmac(hash, saltedPassword, 'Server Key'),
  };
}

export async function deriveScramKeys(password: string, salt: Buffer, iterations: number, hash: ScramHash): Promise<ScramKeys> {
  return scramKeysOf(await saltPassword(password, salt, iterations, hash), hash);
}

/**
 * A fresh random salt and the keys of `hashes` (auth_scram_hash), for storing a new password. Each hash is
 * one PBKDF2 derivation in libuv's thread pool, off the event loop; several run side by side.
 */
export async function createScramCredentials(password: string, iterations = DEFAULT_SCRAM_ITERATIONS, hashes: readonly ScramHash[] = SCRAM_HASHES): Promise<ScramCredentials> {
  const salt = randomBytes(SCRAM_SALT_BYTES);
  const derived = await Promise.all(hashes.map((hash) => deriveScramKeys(password, salt, iterations, hash)));
  const keys: Partial<Record<ScramHash, ScramKeys>> = {};
  hashes.forEach((hash, i) => (keys[hash] = derived[i]));
  return { salt, iterations, keys };
}

const hashesOfNames = new WeakMap<readonly string[], readonly ScramHash[]>();

/**
 * ejabberd's names for the hashes (auth_scram_hash: sha, sha256, sha512) as stored here. Worked out once per
 * configured list (a reload brings a new array): the answer is asked for on every stream and password set.
 */
export function scramHashesOf(names: readonly string[]): readonly ScramHash[] {
  let hashes = hashesOfNames.get(names);
  if (!hashes) {
    const known = names.map((name) => (name === 'sha' ? 'sha1' : name)).filter((h): h is ScramHash => (SCRAM_HASHES as readonly string[]).includes(h));
    hashesOfNames.set(names, (hashes = [...new Set(known)]));
  }
  return hashes;
}

/**
 * Recomputes the StoredKey of `password` and compares it in constant time. Without `hash`, uses the first
 * stored of sha256, sha512, sha1; with a `hash` that is not stored, the password cannot be checked and
 * the answer is false. So is it for a password SASLprep prohibits.
 */
export async function verifyScramPassword(password: string, credentials: ScramCredentials, hash?: ScramHash): Promise<boolean> {
  const chosen = hash ?? VERIFY_PREFERENCE.find((h) => credentials.keys[h]);
  const expected = chosen && credentials.keys[chosen];
  if (!chosen || !expected) return false;
  // What SASLprep prohibits is no password (a SCRAM client could not even send a proof for it).
  if (passwordProhibition(password, 'query')) return false;
  const { storedKey } = await deriveScramKeys(password, credentials.salt, credentials.iterations, chosen);
  return storedKey.length === expected.storedKey.length && timingSafeEqual(storedKey, expected.storedKey);
}
