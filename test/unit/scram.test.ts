import { expect } from 'chai';
import {
  SCRAM_HASHES,
  SCRAM_KEY_LENGTH,
  createScramCredentials,
  deriveScramKeys,
  saltPassword,
  scramDigest,
  scramHmac,
  verifyScramPassword,
  type ScramHash,
  type ScramKeys,
} from '../../kernel/src/accounts/scram.js';

function xor(a: Buffer, b: Buffer): Buffer {
  return Buffer.from(a.map((byte, i) => byte ^ b[i]!));
}

/** The server side of a SCRAM exchange, from stored keys only: checks the client proof, signs the reply. */
function serverCheck(hash: ScramHash, keys: ScramKeys, authMessage: string, proof: Buffer): { proofValid: boolean; serverSignature: Buffer } {
  const clientSignature = scramHmac(hash, keys.storedKey, authMessage);
  const clientKey = xor(proof, clientSignature);
  return {
    proofValid: scramDigest(hash, clientKey).equals(keys.storedKey),
    serverSignature: scramHmac(hash, keys.serverKey, authMessage),
  };
}

describe('scram', () => {
  it('matches the SCRAM-SHA-256 example of RFC 7677', async () => {
    const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
    const keys = await deriveScramKeys('pencil', salt, 4096, 'sha256');
    const authMessage =
      'n=user,r=rOprNGfwEbeRWgbNEkqO,' +
      'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,' +
      'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0';
    const proof = Buffer.from('dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=', 'base64');
    const { proofValid, serverSignature } = serverCheck('sha256', keys, authMessage, proof);
    expect(proofValid).to.equal(true);
    expect(serverSignature.toString('base64')).to.equal('6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=');
  });

  it('matches the SCRAM-SHA-1 example of RFC 5802', async () => {
    const salt = Buffer.from('QSXCR+Q6sek8bf92', 'base64');
    const keys = await deriveScramKeys('pencil', salt, 4096, 'sha1');
    const authMessage =
      'n=user,r=fyko+d2lbbFgONRv9qkxdawL,' +
      'r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096,' +
      'c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j';
    const proof = Buffer.from('v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=', 'base64');
    const { proofValid, serverSignature } = serverCheck('sha1', keys, authMessage, proof);
    expect(proofValid).to.equal(true);
    expect(serverSignature.toString('base64')).to.equal('rmF9pqV8S7suAoZWja4dJRkFsKQ=');
  });

  it('rejects a proof made with another password', async () => {
    const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
    const right = await deriveScramKeys('pencil', salt, 4096, 'sha256');
    const wrongSalted = await saltPassword('pen', salt, 4096, 'sha256');
    const authMessage = 'n=user,r=a,r=ab,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=ab';
    const wrongClientKey = scramHmac('sha256', wrongSalted, 'Client Key');
    const wrongProof = xor(wrongClientKey, scramHmac('sha256', scramDigest('sha256', wrongClientKey), authMessage));
    expect(serverCheck('sha256', right, authMessage, wrongProof).proofValid).to.equal(false);
  });

  it('creates one 16-byte salt and keys of the right length for every hash', async () => {
    const credentials = await createScramCredentials('secret', 1000);
    expect(credentials.salt).to.have.length(16);
    expect(credentials.iterations).to.equal(1000);
    for (const hash of SCRAM_HASHES) {
      const keys = credentials.keys[hash]!;
      expect(keys.storedKey).to.have.length(SCRAM_KEY_LENGTH[hash]);
      expect(keys.serverKey).to.have.length(SCRAM_KEY_LENGTH[hash]);
      expect(keys).to.deep.equal(await deriveScramKeys('secret', credentials.salt, 1000, hash));
    }
    const again = await createScramCredentials('secret', 1000);
    expect(again.salt.equals(credentials.salt)).to.equal(false);
    expect((await createScramCredentials('secret')).iterations).to.equal(4096);
  });

  it('verifies the right password with each hash and rejects a wrong one', async () => {
    const credentials = await createScramCredentials('correct horse', 512);
    for (const hash of SCRAM_HASHES) {
      expect(await verifyScramPassword('correct horse', credentials, hash)).to.equal(true);
      expect(await verifyScramPassword('correct horsE', credentials, hash)).to.equal(false);
    }
    expect(await verifyScramPassword('correct horse', credentials)).to.equal(true);
    expect(await verifyScramPassword('', credentials)).to.equal(false);
  });

  it('falls back to a stored hash when sha256 is missing, and refuses a named hash that is missing', async () => {
    const full = await createScramCredentials('pw', 256);
    const onlySha1 = { ...full, keys: { sha1: full.keys.sha1! } };
    expect(await verifyScramPassword('pw', onlySha1)).to.equal(true);
    expect(await verifyScramPassword('pw', onlySha1, 'sha512')).to.equal(false);
    expect(await verifyScramPassword('pw', { ...full, keys: {} })).to.equal(false);
  });

  it('normalizes passwords with NFKC before hashing', async () => {
    const credentials = await createScramCredentials('\ufb01ve', 256); // the ﬁ ligature
    expect(await verifyScramPassword('five', credentials)).to.equal(true);
    const composed = await createScramCredentials('caf\u00e9', 256);
    expect(await verifyScramPassword('cafe\u0301', composed)).to.equal(true);
  });

  it('refuses a non-positive iteration count', async () => {
    let error: unknown;
    try {
      await deriveScramKeys('pw', Buffer.alloc(16), 0, 'sha256');
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(RangeError);
  });
});
