/**
 * Where modules come from: the built-in packages under `modules/`, then plugins installed under
 * `<data_dir>/plugins/`. A module is a directory with a package.json whose entry's default export is a
 * module definition. Definitions are imported on demand and checked (shape, name, supported kernel range)
 * before anything starts.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import semver from 'semver';
import { PLUGIN_API_VERSION } from '@service/plugin-api';
import type { ModuleDefinition } from '@service/plugin-api';
import { ModuleError } from './errors.js';

export const MODULE_NAME = /^[a-z][a-z0-9_]*$/;

export interface ModuleLocation {
  readonly name: string;
  readonly dir: string;
  readonly source: 'builtin' | 'plugin';
}

export class ModuleCatalog {
  readonly #cache = new Map<string, { key: string; definition: ModuleDefinition }>();
  #commandOwners?: Map<string, string>;

  constructor(
    private readonly builtinDir: string,
    private readonly pluginDir: string,
  ) {}

  /** Names of every module that could be enabled, sorted. */
  async available(): Promise<string[]> {
    const names = new Set<string>();
    for (const dir of [this.builtinDir, this.pluginDir]) {
      for (const name of await listModuleDirs(dir)) names.add(name);
    }
    return [...names].sort();
  }

  async locate(name: string): Promise<ModuleLocation> {
    for (const [source, base] of [
      ['builtin', this.builtinDir],
      ['plugin', this.pluginDir],
    ] as const) {
      const dir = join(base, name);
      if (MODULE_NAME.test(name) && (await isFile(join(dir, 'package.json')))) return { name, dir, source };
    }
    throw new ModuleError('MODULE_NOT_FOUND', name, `not found in ${this.builtinDir} nor in ${this.pluginDir}`);
  }

  /** Imports and checks a module's definition. Re-imports when the entry file changed (an upgrade). */
  async definition(name: string): Promise<ModuleDefinition> {
    const location = await this.locate(name);
    const pkg = await readPackage(location);
    const entry = resolve(location.dir, pkg.main ?? 'index.js');
    let mtime: number;
    try {
      mtime = (await stat(entry)).mtimeMs;
    } catch {
      throw new ModuleError('MODULE_INVALID', name, `entry file ${entry} does not exist${location.source === 'builtin' ? ' (is it built? run npm run build)' : ''}`);
    }
    const key = `${entry}?v=${mtime}`;
    const cached = this.#cache.get(name);
    if (cached?.key === key) return cached.definition;
    let imported: { default?: unknown };
    try {
      imported = (await import(`${pathToFileURL(entry).href}?v=${mtime}`)) as { default?: unknown };
    } catch (err) {
      throw new ModuleError('MODULE_INVALID', name, `cannot import ${entry}: ${(err as Error).message}`, { cause: err });
    }
    const definition = checkDefinition(name, imported.default);
    this.#cache.set(name, { key, definition });
    this.#commandOwners = undefined;
    return definition;
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

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
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
