/**
 * What the publishing tools share about a registry directory and a plugin package: reading and writing
 * index.json (keys sorted, versions in semver order, 2-space JSON and a newline, written atomically), the
 * checks a publishable package.json must pass (the same ones the server's installer makes: service.module
 * equal to the name, a plugin API range, no install scripts), integrity strings, and argument parsing.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REGISTRY_FORMAT } from './plugin-api.mjs';

/** The registry the tools work on by default: plugins-registry/, the tools' parent directory. */
export const DEFAULT_REGISTRY = fileURLToPath(new URL('../../', import.meta.url));

/** Scripts npm runs when a package is installed (prepare runs for git and directory installs). */
export const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare', 'preprepare', 'postprepare'];

/** A module name: what names its directory, its tarball and its key under `modules:`. */
export const NAME_PATTERN = /^[a-z][a-z0-9_]*$/;
export const VERSION_PATTERN = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

export function integrityOf(bytes) {
  return `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
}

/** The problems that make a package.json unpublishable as a plugin (empty when there are none). */
export function manifestProblems(pkg) {
  const problems = [];
  const name = pkg?.name;
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) problems.push(`name ${JSON.stringify(name)} is not a module name (lower-case letters, digits and _, starting with a letter)`);
  if (typeof pkg?.version !== 'string' || !VERSION_PATTERN.test(pkg.version)) problems.push(`version ${JSON.stringify(pkg?.version)} is not a semver version`);
  if (typeof pkg?.description !== 'string' || !pkg.description.trim() || /[\r\n]/.test(pkg.description)) problems.push('description (the one-line summary) is missing or not one line');
  if (pkg?.service?.module !== name) problems.push(`service.module is ${JSON.stringify(pkg?.service?.module)}, not the package name ${JSON.stringify(name)}: not a plugin`);
  if (typeof pkg?.service?.pluginApi !== 'string' || !pkg.service.pluginApi.trim() || /[\r\n]/.test(pkg.service.pluginApi)) problems.push('service.pluginApi (the plugin API range) is missing');
  const scripts = Object.keys(pkg?.scripts ?? {}).filter((s) => INSTALL_SCRIPTS.includes(s));
  if (scripts.length) problems.push(`it has install scripts (${scripts.join(', ')}); plugins may not run code when installed`);
  if (pkg?.gypfile) problems.push('it has "gypfile": a native build runs at install; plugins may not run code when installed');
  if (typeof pkg?.main !== 'string' || !pkg.main.replace(/^\.\//, '').startsWith('dist/')) problems.push(`main ${JSON.stringify(pkg?.main)} is not a file under dist/`);
  return problems;
}

/** semver precedence (build metadata ignored), for ordering versions in the index. */
export function compareVersions(a, b) {
  const [ma, mb] = [VERSION_PATTERN.exec(a), VERSION_PATTERN.exec(b)];
  if (!ma || !mb) return a < b ? -1 : a > b ? 1 : 0;
  for (let i = 1; i <= 3; i++) if (Number(ma[i]) !== Number(mb[i])) return Number(ma[i]) - Number(mb[i]);
  if (!ma[4] || !mb[4]) return ma[4] ? -1 : mb[4] ? 1 : 0;
  const [pa, pb] = [ma[4].split('.'), mb[4].split('.')];
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    if (pa[i] === undefined) return -1;
    if (pb[i] === undefined) return 1;
    const [na, nb] = [/^\d+$/.test(pa[i]), /^\d+$/.test(pb[i])];
    if (na && nb && Number(pa[i]) !== Number(pb[i])) return Number(pa[i]) - Number(pb[i]);
    if (na !== nb) return na ? -1 : 1;
    if (pa[i] !== pb[i]) return pa[i] < pb[i] ? -1 : 1;
  }
  return 0;
}

export function readIndex(registryDir, { create = false } = {}) {
  const file = join(registryDir, 'index.json');
  if (!existsSync(file)) {
    if (create) return { registry: REGISTRY_FORMAT, plugins: {} };
    throw new Error(`${file} does not exist`);
  }
  const index = JSON.parse(readFileSync(file, 'utf8'));
  if (index?.registry !== REGISTRY_FORMAT || typeof index.plugins !== 'object' || index.plugins === null) {
    throw new Error(`${file} is not a registry index of format ${REGISTRY_FORMAT}`);
  }
  return index;
}

/** Object keys sorted (recursively); the keys of a plugin's `versions` in semver order. */
function sortedIndex(value, key) {
  if (Array.isArray(value)) return value.map((v) => sortedIndex(v));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value).sort(key === 'versions' ? compareVersions : undefined);
  return Object.fromEntries(keys.map((k) => [k, sortedIndex(value[k], k)]));
}

export function serializeIndex(index) {
  return `${JSON.stringify(sortedIndex(index), null, 2)}\n`;
}

/** Writes a file through a temporary one and a rename, so a reader sees the old content or the new. */
export function writeAtomically(file, data, mode = 0o644) {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, data, { mode });
  renameSync(temporary, file);
}

export function writeIndex(registryDir, index) {
  writeAtomically(join(registryDir, 'index.json'), serializeIndex(index));
}

/** Prints the message and exits: 1 for a refusal or failure, 2 for a usage error. */
export function fail(message, code = 1) {
  console.error(message);
  process.exit(code);
}
