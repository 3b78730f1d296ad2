#!/usr/bin/env node
/**
 * keygen.mjs: makes a plugin publisher's ed25519 key pair.
 *
 *   node keygen.mjs <out-prefix> [--force]
 *
 * Writes <out-prefix>.pem, the private key (PKCS#8 PEM, mode 0600: publish.mjs signs with it; keep it
 * secret), and <out-prefix>.pub, one line: the base64 of the public key's SPKI DER encoding, the form
 * operators paste into `plugin_trusted_keys` (publisher: <that line>) and verify.mjs takes with --trust.
 * Refuses to overwrite an existing key unless --force.
 */
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const USAGE = 'usage: node keygen.mjs <out-prefix> [--force]   (writes <out-prefix>.pem and <out-prefix>.pub)';
let parsed;
try {
  parsed = parseArgs({ allowPositionals: true, options: { force: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } } });
} catch (err) {
  console.error(`${err.message}\n${USAGE}`);
  process.exit(2);
}
if (parsed.values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (parsed.positionals.length !== 1) {
  console.error(USAGE);
  process.exit(2);
}
const prefix = resolve(parsed.positionals[0]);
const [privateFile, publicFile] = [`${prefix}.pem`, `${prefix}.pub`];
for (const file of [privateFile, publicFile]) {
  if (existsSync(file) && !parsed.values.force) {
    console.error(`${file} exists; refusing to overwrite a key (--force to replace it: what it signed will no longer verify with the new one)`);
    process.exit(1);
  }
}

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
mkdirSync(dirname(prefix), { recursive: true });
writeFileSync(privateFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
chmodSync(privateFile, 0o600); // whatever the umask, and if the file existed (--force)
const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
writeFileSync(publicFile, `${spki}\n`, { mode: 0o644 });
console.log(`private key: ${privateFile} (mode 0600; keep it secret)\npublic key:  ${publicFile}\n  ${spki}`);
