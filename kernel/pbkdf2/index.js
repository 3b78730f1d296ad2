/**
 * PBKDF2-HMAC for SCRAM, two to seven times as fast as node:crypto's (see src/pbkdf2.c for why), or undefined when the
 * native addon was not built here (no compiler at install time): the server then uses crypto.pbkdf2 and says so
 * once at start. Both give the same bytes; test/unit/pbkdf2.test.ts compares them.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const HASH_NUMBER = { sha1: 0, sha256: 1, sha512: 2 };

let binding;
let problem;
try {
  binding = require('./build/Release/pbkdf2.node');
} catch (err) {
  problem = err instanceof Error ? err.message : String(err);
}

export const nativePbkdf2 = binding
  ? (password, salt, iterations, hash) => {
      const number = Object.hasOwn(HASH_NUMBER, hash) ? HASH_NUMBER[hash] : undefined;
      if (number === undefined) return Promise.reject(new TypeError(`unknown PBKDF2 hash ${String(hash)}`));
      return binding.derive(password, salt, iterations, number);
    }
  : undefined;

export const nativePbkdf2Problem = problem;

/**
 * How the addon computes SHA-1 and SHA-256 on this CPU: 'sha-ni' (the x86 SHA extensions, two derivations at once),
 * 'avx512' or 'avx2' (up to eight derivations queued together, one per vector lane), or 'openssl'.
 */
export const nativePbkdf2Sha = binding ? binding.implementation : undefined;
