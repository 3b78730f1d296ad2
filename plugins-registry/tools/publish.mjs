#!/usr/bin/env node
/**
 * publish.mjs: packs a built plugin into a registry directory and signs it, as its publisher.
 *
 *   node publish.mjs <plugin-dir> --key <private.pem> --publisher <id> [--registry <dir>] [--version-dir <dir>]
 *                    [--force] [--skip-load-check]
 *
 * Reads <plugin-dir>/package.json (name, version, description = summary, homepage, service.pluginApi) and
 * refuses a package that is not a plugin (service.module ≠ name), has install scripts, or whose built entry
 * declares another name, version or plugin API range than its package.json. Packs package/package.json,
 * package/README.md and package/dist/** into a deterministic gzip'd tarball (sorted entries, fixed mtime,
 * modes 0644/0755, uid/gid 0), writes it to <registry>/<name>/<name>-<version>.tgz, signs
 * pluginSignaturePayload({ name, version, pluginApi, integrity }) (from @service/plugin-api: the server
 * verifies the same bytes) with the publisher's ed25519 key, and adds or replaces the version in
 * <registry>/index.json, keeping every other plugin and version.
 *
 * --registry     the registry directory (default: plugins-registry/, this tool's parent directory).
 * --version-dir  pack the build found in this directory instead of <plugin-dir> (another version of the
 *                same plugin built elsewhere, e.g. a temporary copy with an older source; its package.json
 *                must name the same plugin).
 * --force        replace a published version whose tarball differs, or take over a plugin published under
 *                another publisher. Without it both are refused: a published version never silently changes.
 * --skip-load-check  do not import the built entry to compare its definition with package.json.
 *
 * Publishing the same build again is a no-op that keeps the version's publication date (tarballs and
 * ed25519 signatures are deterministic), so a registry can be regenerated and committed reproducibly.
 * The publication date is SOURCE_DATE_EPOCH when set, else now.
 */
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { packTarGz } from './lib/tarball.mjs';
import { pluginSignaturePayload } from './lib/plugin-api.mjs';
import { DEFAULT_REGISTRY, fail, integrityOf, manifestProblems, readIndex, writeAtomically, writeIndex } from './lib/registry-files.mjs';

const USAGE = 'usage: node publish.mjs <plugin-dir> --key <private.pem> --publisher <id> [--registry <dir>] [--version-dir <dir>] [--force] [--skip-load-check]';

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      key: { type: 'string' },
      publisher: { type: 'string' },
      registry: { type: 'string' },
      'version-dir': { type: 'string' },
      force: { type: 'boolean', default: false },
      'skip-load-check': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
} catch (err) {
  fail(`${err.message}\n${USAGE}`, 2);
}
const { values: opts, positionals } = parsed;
if (opts.help) {
  console.log(USAGE);
  process.exit(0);
}
if (positionals.length !== 1 || !opts.key || !opts.publisher) fail(USAGE, 2);
if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(opts.publisher)) fail(`publisher "${opts.publisher}" must be letters, digits, '.', '_' and '-'`, 2);

const pluginDir = resolve(positionals[0]);
const packDir = resolve(opts['version-dir'] ?? pluginDir);
const registryDir = resolve(opts.registry ?? DEFAULT_REGISTRY);

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    fail(`cannot read ${file}: ${err.message}`);
  }
}

// --- The package -------------------------------------------------------------------------------
const pkg = readJson(join(packDir, 'package.json'));
const problems = manifestProblems(pkg);
if (problems.length) fail(`refusing to publish ${join(packDir, 'package.json')}:\n  - ${problems.join('\n  - ')}`);
if (packDir !== pluginDir) {
  const pluginPkg = readJson(join(pluginDir, 'package.json'));
  if (pluginPkg.name !== pkg.name) fail(`--version-dir holds ${pkg.name}, not the plugin ${pluginPkg.name} of ${pluginDir}`);
}
const { name, version, description: summary, homepage } = pkg;
const pluginApi = pkg.service.pluginApi;
const entry = join(packDir, pkg.main);
if (!existsSync(entry)) fail(`the entry ${pkg.main} does not exist in ${packDir}: build the plugin first (npm run build)`);
if (!existsSync(join(packDir, 'README.md'))) fail(`${packDir} has no README.md: a plugin documents what it does, its options and its commands`);

if (!opts['skip-load-check']) {
  let definition;
  try {
    definition = (await import(pathToFileURL(entry).href)).default;
  } catch (err) {
    fail(`cannot import ${entry} to check its definition (${err.message}); install the plugin's devDependencies, or pass --skip-load-check`);
  }
  const mismatches = [
    ['name', definition?.name, name],
    ['version', definition?.version, version],
    ['pluginApi', definition?.pluginApi, pluginApi],
  ].filter(([, declared, expected]) => declared !== expected);
  if (mismatches.length) {
    fail(`refusing to publish: the definition exported by ${pkg.main} disagrees with package.json: ${mismatches.map(([f, d, e]) => `${f} ${JSON.stringify(d)} ≠ ${JSON.stringify(e)}`).join(', ')}`);
  }
}

// --- The tarball -------------------------------------------------------------------------------
function listFiles(dir) {
  const files = [];
  for (const dirent of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, dirent.name);
    if (dirent.isDirectory()) files.push(...listFiles(path));
    else if (dirent.isFile()) files.push(path);
    else fail(`refusing to pack ${path}: only regular files and directories go into a plugin tarball`);
  }
  return files;
}
const sources = [join(packDir, 'package.json'), join(packDir, 'README.md'), ...listFiles(join(packDir, 'dist'))];
const files = sources
  .map((file) => ({
    path: `package/${relative(packDir, file).split(sep).join('/')}`,
    data: readFileSync(file),
    executable: (lstatSync(file).mode & 0o111) !== 0,
  }))
  .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
const tarball = packTarGz(files);
const integrity = integrityOf(tarball);
const tarballPath = `${name}/${name}-${version}.tgz`;

// --- The signature -----------------------------------------------------------------------------
let privateKey;
try {
  privateKey = createPrivateKey(readFileSync(opts.key));
} catch (err) {
  fail(`cannot read the private key ${opts.key}: ${err.message}`);
}
if (privateKey.asymmetricKeyType !== 'ed25519') fail(`${opts.key} is a ${privateKey.asymmetricKeyType} key; plugin signatures are ed25519 (make one with keygen.mjs)`);
const payload = pluginSignaturePayload({ name, version, pluginApi, integrity });
const signature = sign(null, payload, privateKey).toString('base64');
if (!verify(null, payload, createPublicKey(privateKey), Buffer.from(signature, 'base64'))) fail('the signature just made does not verify');

// --- The index ---------------------------------------------------------------------------------
let index;
try {
  index = readIndex(registryDir, { create: true });
} catch (err) {
  fail(err.message);
}
const previous = index.plugins[name];
if (previous && previous.publisher !== opts.publisher && !opts.force) {
  fail(`refusing to publish: ${name} is published by ${previous.publisher} in ${registryDir}, not ${opts.publisher} (--force to take it over)`);
}
const existing = previous?.versions?.[version];
const tarballFile = join(registryDir, tarballPath);
const existingBytes = existsSync(tarballFile) ? readFileSync(tarballFile) : undefined;
const sameAsIndexed = !existing || existing.integrity === integrity;
const sameAsFile = !existingBytes || integrityOf(existingBytes) === integrity;
if (!(sameAsIndexed && sameAsFile) && !opts.force) {
  fail(
    `refusing to publish: ${name} ${version} is already published with different bytes (${sameAsIndexed ? `${tarballPath} holds ${integrityOf(existingBytes)}` : existing.integrity}, now ${integrity}); ` +
      'publish a new version, or pass --force to replace it',
  );
}
const unchanged = existing?.integrity === integrity && existing.signature === signature && sameAsFile;
const published =
  existing?.integrity === integrity && existing.published
    ? existing.published
    : new Date(process.env.SOURCE_DATE_EPOCH ? Number(process.env.SOURCE_DATE_EPOCH) * 1000 : Date.now()).toISOString();

if (!existingBytes || !tarball.equals(existingBytes)) writeAtomically(tarballFile, tarball);
index.plugins = {
  ...index.plugins,
  [name]: {
    summary,
    publisher: opts.publisher,
    ...(typeof homepage === 'string' && homepage ? { homepage } : {}),
    versions: { ...(previous?.versions ?? {}), [version]: { pluginApi, tarball: tarballPath, integrity, signature, published } },
  },
};
writeIndex(registryDir, index);

console.log(
  `${unchanged ? 'unchanged' : existing?.integrity === integrity ? 're-signed' : existing ? 'replaced' : 'published'}: ${name} ${version} (pluginApi ${pluginApi}) by ${opts.publisher}\n` +
    `  ${relative(process.cwd(), tarballFile) || tarballFile}: ${tarball.length} bytes, ${files.length} files\n` +
    `  integrity ${integrity}`,
);
