#!/usr/bin/env node
/**
 * sign-npm.mjs: signs a plugin for an npm-compatible registry, as its publisher, before `npm publish`.
 *
 *   node sign-npm.mjs <plugin-dir> --key <private.pem> --publisher <id>
 *
 * On npm the signature travels inside the package, in package.json's `service.signature`, so it signs the
 * package's content digest (contentDigest from @service/plugin-api: every file npm would pack, with
 * package.json counted without its signature) rather than the tarball. This tool asks npm which files it
 * would pack (`npm pack --dry-run --json`), computes that digest, signs pluginSignaturePayload({ name:
 * service.module, version, pluginApi: service.pluginApi, integrity: digest }) and writes service.publisher and
 * service.signature into package.json. Publish right after, without changing a packed file (a change
 * invalidates the signature: the server refuses the package).
 */
import { execFileSync } from 'node:child_process';
import { createPrivateKey, sign } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { contentDigest, pluginSignaturePayload } from './lib/plugin-api.mjs';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { key: { type: 'string' }, publisher: { type: 'string' } } });
if (positionals.length !== 1 || !values.key || !values.publisher) {
  console.error('usage: node sign-npm.mjs <plugin-dir> --key <private.pem> --publisher <id>');
  process.exit(2);
}
const dir = resolve(positionals[0]);
const manifestFile = join(dir, 'package.json');
const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
const module = manifest.service?.module;
const pluginApi = manifest.service?.pluginApi;
if (!module || !pluginApi) {
  console.error(`${manifestFile}: "service": { "module", "pluginApi" } is required`);
  process.exit(1);
}
if (!(manifest.keywords ?? []).includes('service-plugin')) {
  console.error(`${manifestFile}: add the "service-plugin" keyword, or servers will not find the package`);
  process.exit(1);
}
manifest.service = { ...manifest.service, publisher: values.publisher };
delete manifest.service.signature;
writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);

const [packed] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir, encoding: 'utf8' }));
const files = packed.files.map((file) => ({ path: file.path, bytes: readFileSync(join(dir, file.path)) }));
const integrity = contentDigest(files);
const key = createPrivateKey(readFileSync(values.key));
const signature = sign(null, pluginSignaturePayload({ name: module, version: manifest.version, pluginApi, integrity }), key).toString('base64');
manifest.service.signature = signature;
writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`${manifest.name}@${manifest.version} (${module}) signed by ${values.publisher}: ${integrity}; now run npm publish`);
