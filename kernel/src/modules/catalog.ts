/**
 * Where modules come from: the built-in packages under `modules/`, then plugins under `<data_dir>/plugins/`:
 * those installed from a registry (the version directory the lockfile pins, `<name>/<version>/`) and those
 * an operator or developer put there by hand (`<name>/package.json`). A module is a directory with a
 * package.json whose entry's default export is a module definition. Definitions are imported on demand and
 * checked (shape, name, supported plugin API range) before anything starts.
 *
 * Code reloads: a fingerprint of the module's files tells whether its code changed; changed code is imported
 * under a generation named after it (`index.js?gen=<fingerprint>`), which the resolve hook carries to every
 * relative import, so reloading a module reads all of its files again, and reloading unchanged code returns
 * the same definition.
 */
import { createHash } from 'node:crypto';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import semver from 'semver';
import { PLUGIN_API_VERSION } from '@service/plugin-api';
import type { ModuleDefinition } from '@service/plugin-api';
import { readLock, versionDir } from '../plugins/lockfile.js';
import { ModuleError } from './errors.js';

export const MODULE_NAME = /^[a-z][a-z0-9_]*$/;

export interface ModuleLocation {
  readonly name: string;
  readonly dir: string;
  /** builtin: modules/; installed: from a registry, pinned in the lockfile; local: put under plugins/ by hand. */
  readonly source: 'builtin' | 'installed' | 'local';
}

interface Loaded {
  readonly dir: string;
  readonly fingerprint: string;
  readonly definition: ModuleDefinition;
}

export class ModuleCatalog {
  readonly #loaded = new Map<string, Loaded>();
  #commandOwners?: Map<string, string>;

  constructor(
    private readonly builtinDir: string,
    readonly pluginDir: string,
  ) {}

  /** Names of every module that could be enabled, sorted. */
  async available(): Promise<string[]> {
    const names = new Set<string>([...(await listModuleDirs(this.builtinDir)), ...(await listModuleDirs(this.pluginDir))]);
    for (const name of Object.keys(await this.#lock())) names.add(name);
    return [...names].sort();
  }

  /** Plugins installed from a registry, as the lockfile pins them. */
  async installed(): Promise<string[]> {
    return Object.keys(await this.#lock()).sort();
  }

  /** Whether a name is a built-in module's (a plugin may not take it). */
  async isBuiltin(name: string): Promise<boolean> {
    return MODULE_NAME.test(name) && isFile(join(this.builtinDir, name, 'package.json'));
  }

  async locate(name: string): Promise<ModuleLocation> {
    if (MODULE_NAME.test(name)) {
      if (await isFile(join(this.builtinDir, name, 'package.json'))) return { name, dir: join(this.builtinDir, name), source: 'builtin' };
      const locked = (await this.#lock())[name];
      if (locked) return { name, dir: versionDir(this.pluginDir, name, locked.version), source: 'installed' };
      if (await isFile(join(this.pluginDir, name, 'package.json'))) return { name, dir: join(this.pluginDir, name), source: 'local' };
    }
    throw new ModuleError('MODULE_NOT_FOUND', name, `not found in ${this.builtinDir} nor in ${this.pluginDir}`);
  }

  /**
   * Imports and checks a module's definition, once per location: later calls return the same definition
   * until `reload` asks for the code on disk (which, unchanged, is still the same definition). A module
   * that moved (an upgrade pins another version directory) is imported from its new place.
   */
  async definition(name: string, options: { reload?: boolean } = {}): Promise<ModuleDefinition> {
    const location = await this.locate(name);
    const loaded = this.#loaded.get(name);
    if (loaded?.dir === location.dir && !options.reload) return loaded.definition;
    const pkg = await readPackage(location);
    const entry = resolve(location.dir, pkg.main ?? 'index.js');
    if (!(await isFile(entry))) {
      throw new ModuleError('MODULE_INVALID', name, `entry file ${entry} does not exist${location.source === 'builtin' ? ' (is it built? run npm run build)' : ''}`);
    }
    const fingerprint = await codeFingerprint(location.dir);
    if (loaded?.dir === location.dir && loaded.fingerprint === fingerprint) return loaded.definition;
    let imported: { default?: unknown };
    try {
      imported = (await import(entryUrl(entry, location.dir, fingerprint))) as { default?: unknown };
    } catch (err) {
      throw new ModuleError('MODULE_INVALID', name, `cannot import ${entry}: ${(err as Error).message}`, { cause: err });
    }
    const definition = checkDefinition(name, imported.default);
    this.#loaded.set(name, { dir: location.dir, fingerprint, definition });
    this.#commandOwners = undefined;
    return definition;
  }

  /** Whether the code on disk of a loaded module differs from what was loaded (update_list). */
  async changedOnDisk(name: string): Promise<boolean> {
    const loaded = this.#loaded.get(name);
    if (!loaded) return false;
    try {
      return (await this.locate(name)).dir !== loaded.dir || (await codeFingerprint(loaded.dir)) !== loaded.fingerprint;
    } catch {
      return false; // Gone from disk: nothing to reload.
    }
  }

  /** Names of the modules whose definitions were loaded. */
  loadedNames(): string[] {
    return [...this.#loaded.keys()].sort();
  }

  /** Forgets what was derived from definitions (after a plugin is installed or removed). */
  invalidate(): void {
    this.#commandOwners = undefined;
  }

  async #lock() {
    try {
      return await readLock(this.pluginDir);
    } catch {
      return {}; // A broken lockfile shows in the installer's commands, which read it strictly.
    }
  }

  /**
   * Which available module declares a command, for "provided by module X, which is not enabled". Built on
   * first need, from the static declarations; modules that fail to load are skipped.
   */
  async commandOwner(command: string): Promise<string | undefined> {
    if (!this.#commandOwners) {
      const owners = new Map<string, string>();
      for (const name of await this.available()) {
        try {
          for (const decl of (await this.definition(name)).commands ?? []) owners.set(decl.name, name);
        } catch {
          // A broken module cannot own commands; its own error shows when someone enables it.
        }
      }
      this.#commandOwners = owners;
    }
    return this.#commandOwners.get(command);
  }
}

async function listModuleDirs(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    const out: string[] = [];
    for (const e of entries) {
      if ((e.isDirectory() || e.isSymbolicLink()) && MODULE_NAME.test(e.name) && (await isFile(join(dir, e.name, 'package.json')))) out.push(e.name);
    }
    return out;
  } catch {
    return [];
  }
}

/** Whether `path` is a regular file (false when it does not exist). */
export async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Process-wide: the fingerprint each module directory's code had when it was first imported. */
const firstImported = new Map<string, string>();

/**
 * The URL a module's entry is imported from. The code a directory first had is imported at plain URLs, the
 * ones its API package (`@service/<module>/api`) also resolves to, so both share one copy of each class.
 * Changed code is imported under a generation, carried to every relative import (resolve-hooks.ts): the
 * whole module is read again. Consumers of its API package keep the first copy of that package.
 */
function entryUrl(entry: string, dir: string, fingerprint: string): string {
  const href = pathToFileURL(entry).href;
  const first = firstImported.get(dir);
  if (first === undefined) firstImported.set(dir, fingerprint);
  return first === undefined || first === fingerprint ? href : `${href}?gen=${fingerprint}`;
}

/**
 * A fingerprint of a module's code: the path, size and modification time of every file under its directory
 * (node_modules excluded: packages are not reloaded). Changes when any file is rebuilt.
 */
export async function codeFingerprint(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (at: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(at, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile() && /\.(m?js|cjs|json)$/.test(entry.name)) {
        const info = await stat(path);
        hash.update(`${relative(dir, path)}\0${info.size}\0${info.mtimeMs}\n`);
      }
    }
  };
  await walk(dir);
  return hash.digest('hex').slice(0, 16);
}

async function readPackage(location: ModuleLocation): Promise<{ main?: string }> {
  try {
    return JSON.parse(await readFile(join(location.dir, 'package.json'), 'utf8')) as { main?: string };
  } catch (err) {
    throw new ModuleError('MODULE_INVALID', location.name, `cannot read ${join(location.dir, 'package.json')}: ${(err as Error).message}`);
  }
}

function checkDefinition(name: string, value: unknown): ModuleDefinition {
  if (typeof value !== 'object' || value === null) {
    throw new ModuleError('MODULE_INVALID', name, 'the default export is not a module definition (an object with name, version, kernel, summary and start)');
  }
  const def = value as Partial<ModuleDefinition>;
  const missing = (['name', 'version', 'pluginApi', 'summary'] as const).filter((k) => typeof def[k] !== 'string');
  if (typeof def.start !== 'function') missing.push('start' as never);
  if (missing.length) throw new ModuleError('MODULE_INVALID', name, `the definition lacks ${missing.join(', ')}`);
  if (def.name !== name) throw new ModuleError('MODULE_NAME_MISMATCH', name, `its definition is named '${def.name}'; the directory and the name must agree`);
  if (!semver.valid(def.version)) throw new ModuleError('MODULE_INVALID', name, `version '${def.version}' is not a semver version`);
  if (!semver.validRange(def.pluginApi)) throw new ModuleError('MODULE_INVALID', name, `pluginApi range '${def.pluginApi}' is not a semver range`);
  if (!semver.satisfies(PLUGIN_API_VERSION, def.pluginApi!, { includePrerelease: true })) {
    throw new ModuleError('MODULE_API_MISMATCH', name, `version ${def.version} was built for plugin API ${def.pluginApi}, but this server's plugin API is ${PLUGIN_API_VERSION}`);
  }
  if (def.perHost) {
    // What a per-host module registers is scoped to its host; these belong to the whole server.
    const global = [
      def.commands?.length ? 'commands' : '',
      def.provides?.length ? 'provided services' : '',
      Object.keys(def.listeners ?? {}).length ? 'listener kinds' : '',
      def.frontends?.length ? 'frontends' : '',
    ].filter(Boolean);
    if (global.length) throw new ModuleError('MODULE_INVALID', name, `it runs per host, so it cannot declare ${global.join(', ')}: those belong to the whole server`);
  }
  return def as ModuleDefinition;
}
