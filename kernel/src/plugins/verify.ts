/**
 * What makes a downloaded plugin trustworthy: its bytes match the integrity the registry lists (sha512), and
 * its publisher, whose key the operator trusts, signed that integrity together with the plugin's name,
 * version and plugin API range. Comparisons of digests are constant-time.
 */
import { createHash, createPublicKey, timingSafeEqual, verify, type KeyObject } from 'node:crypto';
import { pluginSignaturePayload, type SignedFacts } from '@service/plugin-api';

export class VerificationError extends Error {}

/** Throws unless `bytes` have the `sha512-<base64>` integrity. */
export function checkIntegrity(name: string, bytes: Buffer, integrity: string): void {
  const match = /^sha512-([A-Za-z0-9+/]+={0,2})$/.exec(integrity);
  if (!match) throw new VerificationError(`${name}: the registry lists integrity '${integrity}', which is not sha512-<base64>`);
  const expected = Buffer.from(match[1]!, 'base64');
  const actual = createHash('sha512').update(bytes).digest();
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
    throw new VerificationError(`${name}: integrity mismatch: the tarball's sha512 is not the one the registry lists (the tarball was altered or corrupted)`);
  }
}

/** Throws unless `signature` is the publisher's ed25519 signature of the facts. */
export function checkSignature(facts: SignedFacts, publisher: string, signature: string, trusted: Readonly<Record<string, string>>): void {
  const key = trusted[publisher];
  if (key === undefined) {
    throw new VerificationError(`${facts.name}: its publisher '${publisher}' is not trusted (add its public key to plugin_trusted_keys)`);
  }
  let publicKey: KeyObject;
  try {
    publicKey = parsePublicKey(key);
  } catch (err) {
    throw new VerificationError(`plugin_trusted_keys: the key of '${publisher}' is not an ed25519 public key (${(err as Error).message})`);
  }
  const ok = /^[A-Za-z0-9+/]+={0,2}$/.test(signature) && verify(null, pluginSignaturePayload(facts), publicKey, Buffer.from(signature, 'base64'));
  if (!ok) throw new VerificationError(`${facts.name} ${facts.version}: bad signature: it was not signed by ${publisher}'s key, or its name, version, plugin API range or integrity were changed`);
}

/** A public key as operators paste it: base64 of the SPKI DER, or a PEM block. */
export function parsePublicKey(text: string): KeyObject {
  const key = text.includes('-----BEGIN') ? createPublicKey(text) : createPublicKey({ key: Buffer.from(text.trim(), 'base64'), format: 'der', type: 'spki' });
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`it is a ${key.asymmetricKeyType} key`);
  return key;
}
