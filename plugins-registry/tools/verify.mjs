#!/usr/bin/env node
/**
 * verify.mjs: checks a registry as the server's installer would, before anyone installs from it: for
 * publishers (after publishing), for operators (before adding a source) and for the tests.
 *
 *   node verify.mjs [--registry <dir or http(s) URL>] --trust <publisher>=<base64 SPKI> [--trust …]
 *
 * For every version of every plugin in index.json: the tarball is where the index says (inside the
 * registry), its sha512 matches `integrity`, `signature` is a valid ed25519 signature of
 * pluginSignaturePayload({ name, version, pluginApi, integrity }) by the key trusted for the plugin's
 * publisher, and the package.json inside the tarball is that plugin, that version and that plugin API range,
 * without install scripts. Prints one line per version; exits 1 naming every failure (an untrusted
 * publisher is a failure), 2 on a usage error. --registry defaults to plugins-registry/.
 */
import { createPublicKey, verify } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { readTarGz } from './lib/tarball.mjs';
import { REGISTRY_FORMAT, pluginSignaturePayload } from './lib/plugin-api.mjs';
import { DEFAULT_REGISTRY, fail, integrityOf, manifestProblems } from './lib/registry-files.mjs';

const USAGE = 'usage: node verify.mjs [--registry <dir or URL>] --trust <publisher>=<base64 SPKI ed25519 key> [--trust …]';
let parsed;
try {
  parsed = parseArgs({
    options: {
      registry: { type: 'string' },
      trust: { type: 'string', multiple: true, default: [] },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
} catch (err) {
  fail(`${err.message}\n${USAGE}`, 2);
}
const opts = parsed.values;
if (opts.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!opts.trust.length) fail(`no --trust given: nothing could be trusted\n${USAGE}`, 2);

const trusted = new Map();
for (const spec of opts.trust) {
  const at = spec.indexOf('=');
  if (at <= 0) fail(`--trust ${spec}: expected <publisher>=<base64 SPKI key>`, 2);
  const [publisher, base64] = [spec.slice(0, at), spec.slice(at + 1).trim()];
  let key;
  try {
    key = createPublicKey({ key: Buffer.from(base64, 'base64'), format: 'der', type: 'spki' });
  } catch (err) {
    fail(`--trust ${publisher}: not a base64 SPKI public key (${err.message})`, 2);
  }
  if (key.asymmetricKeyType !== 'ed25519') fail(`--trust ${publisher}: a ${key.asymmetricKeyType} key; publisher keys are ed25519`, 2);
  trusted.set(publisher, key);
}

const remote = /^https?:\/\//.test(opts.registry ?? '');
const registry = remote ? new URL(opts.registry.endsWith('/') ? opts.registry : `${opts.registry}/`) : resolve(opts.registry ?? DEFAULT_REGISTRY);

async function fetchBytes(url) {
  const response = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  if (!response.ok) throw new Error(`${url} answered ${response.status} ${response.statusText}`);
  return Buffer.from(await response.arrayBuffer());
}

/** The bytes of a path or URL given relative to the registry, refusing what points outside it. */
async function registryBytes(ref) {
  if (/^https?:\/\//.test(ref)) return fetchBytes(ref);
  if (remote) return fetchBytes(new URL(ref, registry).href);
  const path = resolve(registry, ref);
  if (!path.startsWith(registry.endsWith(sep) ? registry : `${registry}${sep}`)) throw new Error(`${ref} points outside the registry`);
  return readFile(path);
}

let index;
try {
  index = JSON.parse((await registryBytes('index.json')).toString('utf8'));
} catch (err) {
  fail(`cannot read the index of ${remote ? registry.href : join(registry, 'index.json')}: ${err.message}`);
}
if (index?.registry !== REGISTRY_FORMAT || typeof index.plugins !== 'object' || index.plugins === null) {
  fail(`${remote ? registry.href : registry}: index.json is not a registry index of format ${REGISTRY_FORMAT}`);
}

const failures = [];
let checked = 0;
for (const [name, plugin] of Object.entries(index.plugins).sort(([a], [b]) => (a < b ? -1 : 1))) {
  const key = trusted.get(plugin?.publisher);
  if (typeof plugin?.summary !== 'string' || typeof plugin?.versions !== 'object' || plugin.versions === null) {
    failures.push(`${name}: the entry lacks a summary or versions`);
    continue;
  }
  for (const [version, entry] of Object.entries(plugin.versions)) {
    const what = `${name} ${version}`;
    const problems = [];
    for (const field of ['pluginApi', 'tarball', 'integrity', 'signature']) {
      if (typeof entry?.[field] !== 'string' || !entry[field]) problems.push(`no ${field}`);
    }
    if (problems.length) {
      failures.push(`${what}: ${problems.join(', ')}`);
      continue;
    }
    checked++;
    if (!key) problems.push(`publisher ${JSON.stringify(plugin.publisher)} is not trusted (no --trust ${plugin.publisher}=…)`);
    let bytes;
    try {
      bytes = await registryBytes(entry.tarball);
    } catch (err) {
      failures.push(`${what}: cannot read its tarball ${entry.tarball}: ${err.code ?? err.message}`);
      continue;
    }
    const actual = integrityOf(bytes);
    if (actual !== entry.integrity) problems.push(`integrity mismatch: the index says ${entry.integrity}, ${entry.tarball} is ${actual}`);
    if (key) {
      let ok = false;
      try {
        ok = verify(null, pluginSignaturePayload({ name, version, pluginApi: entry.pluginApi, integrity: entry.integrity }), key, Buffer.from(entry.signature, 'base64'));
      } catch (err) {
        problems.push(`signature cannot be checked: ${err.message}`);
      }
      if (!ok && !problems.some((p) => p.startsWith('signature'))) problems.push(`bad signature: not signed by ${plugin.publisher}'s trusted key for these name, version, pluginApi and integrity`);
    }
    try {
      const manifest = readTarGz(bytes).find((e) => e.path === 'package/package.json' && e.type === '0');
      if (!manifest) throw new Error('it holds no package/package.json');
      const pkg = JSON.parse(manifest.data.toString('utf8'));
      for (const p of manifestProblems(pkg)) problems.push(`its package.json: ${p}`);
      if (pkg.name !== name || pkg.version !== version) problems.push(`its package.json is ${pkg.name} ${pkg.version}, not ${what}`);
      if (pkg.service?.pluginApi !== entry.pluginApi) problems.push(`its package.json's pluginApi ${JSON.stringify(pkg.service?.pluginApi)} is not the index's ${JSON.stringify(entry.pluginApi)}`);
    } catch (err) {
      problems.push(`unreadable tarball: ${err.message}`);
    }
    if (problems.length) failures.push(`${what}: ${problems.join('; ')}`);
    else console.log(`ok   ${what} (pluginApi ${entry.pluginApi}, ${plugin.publisher}, ${entry.tarball})`);
  }
}

if (failures.length) {
  for (const failure of failures) console.error(`FAIL ${failure}`);
  console.error(`${failures.length} failure(s) in ${remote ? registry.href : registry}`);
  process.exit(1);
}
console.log(`${checked} version(s) verified in ${remote ? registry.href : registry}`);
