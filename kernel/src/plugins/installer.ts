/**
 * Installs, upgrades and removes plugins on a running server (module_install, module_upgrade,
 * module_uninstall, module_check, modules_available, modules_installed, modules_update_specs).
 *
 * An install fetches a version's tarball from the first registry source listing the plugin, checks it
 * (integrity, the publisher's signature, the plugin API range, the name of a built-in, install scripts),
 * unpacks it into a staging directory, installs its production dependencies (scripts ignored), moves it to
 * its immutable `<data_dir>/plugins/<name>/<version>/`, pins it in the lockfile, and asks the server to
 * bring the running modules to the configuration plus the lockfile. When the module then fails to start,
 * the previous lockfile is put back and applied again: an upgrade restores the old version with its
 * registrations; an install leaves nothing. Refusals and failures are CommandErrors naming the plugin and the
 * reason (the one error table of every frontend). Operations run one at a time, through the server's queue of
 * module changes (reload_config takes the same queue).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import semver from 'semver';
import { PLUGIN_API_VERSION, badArgument, conflict, contentDigest, failed, notFound, type PackageFile, type RegistryIndex, type RegistryPlugin, type RegistryVersion } from '@service/plugin-api';
import type { Logger } from '../log/logger.js';
import type { ModuleCatalog } from '../modules/catalog.js';
import { MODULE_NAME } from '../modules/catalog.js';
import { readLock, versionDir, writeLock, type LockedPlugin, type PluginLock } from './lockfile.js';
import { openSource, type RegistrySource } from './sources.js';
import { unpackTarball } from './unpack.js';
import { checkIntegrity, checkSignature } from './verify.js';

const run = promisify(execFile);

/** Scripts npm would run on install: a plugin may not have them (its dependencies' are never run). */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare', 'preprepare', 'postprepare'];
/** The specs cache: every source's index as modules_update_specs last fetched it. */
const SPECS_FILE = 'specs.json';

export interface PluginSettings {
  readonly allowed: boolean;
  /** Source specifications, in priority order, with `bundled` expanded. */
  readonly sources: readonly string[];
  /** Directory relative source paths are read from (the configuration file's). */
  readonly baseDir: string;
  readonly trustedKeys: Readonly<Record<string, string>>;
  /** Modules the configuration file names explicitly (uninstall refuses them). */
  readonly configured: readonly string[];
}

/** What the installer needs from the server: apply the lockfile, one change at a time. */
export interface ModuleRuntime {
  /** Runs `change` after every earlier module change, before any later one. */
  serialized<T>(change: () => Promise<T>): Promise<T>;
  /**
   * Starts, stops and restarts modules to match the configuration plus the lockfile (and restarts the
   * `restart` instances). Throws when a module fails.
   */
  applyModules(options?: { restart?: readonly string[] }): Promise<void>;
}

export type Progress = (done: number, total: number, label: string) => void;

export interface AvailablePlugin {
  readonly name: string;
  readonly summary: string;
  readonly source: string;
  readonly plugin: RegistryPlugin;
}

export class PluginInstaller {
  constructor(
    private readonly catalog: ModuleCatalog,
    private readonly settings: () => PluginSettings,
    private readonly runtime: ModuleRuntime,
    private readonly logger: Logger,
  ) {}

  get #dir(): string {
    return this.catalog.pluginDir;
  }

  /** Fetches every source's index into the specs cache. Fails when a source cannot be read. */
  async updateSpecs(): Promise<number> {
    const fetched: Record<string, RegistryIndex> = {};
    for (const source of this.#sources()) {
      try {
        fetched[source.id] = await source.index();
      } catch (err) {
        throw failed((err as Error).message);
      }
    }
    await this.#cacheSpecs(fetched);
    const count = new Set(Object.values(fetched).flatMap((i) => Object.keys(i.plugins))).size;
    this.logger.notice({ sources: Object.keys(fetched), plugins: count }, 'plugin specs updated: %d plugins', count);
    return count;
  }

  /**
   * Every plugin the sources list, by name. A directory is read as it is now; a remote source as
   * modules_update_specs last fetched it (fetched now if it never was).
   */
  async available(): Promise<AvailablePlugin[]> {
    const cached = (await this.#cachedSpecs()) ?? {};
    const byName = new Map<string, AvailablePlugin>();
    // Sources in configured order: the first that lists a name provides it.
    for (const source of this.#sources()) {
      let index = source.remote ? cached[source.id] : undefined;
      if (!index) {
        try {
          index = await source.index();
        } catch (err) {
          throw failed((err as Error).message);
        }
        if (source.remote) await this.#cacheSpecs({ ...cached, [source.id]: index });
      }
      for (const [name, plugin] of Object.entries(index.plugins)) {
        if (!byName.has(name)) byName.set(name, { name, summary: plugin.summary, source: source.id, plugin });
      }
    }
    return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  async installed(): Promise<PluginLock> {
    try {
      return await readLock(this.#dir);
    } catch (err) {
      throw failed(`the plugin lockfile cannot be read: ${(err as Error).message}`);
    }
  }

  /** Checks that a plugin can be installed: listed, a compatible version, its package verified. Changes nothing. */
  async check(name: string, progress?: Progress): Promise<string> {
    await this.#checkName(name);
    const { spec, version, entry } = await this.#candidate(name);
    const staging = await this.#unpackVerified(name, spec, version, entry, progress);
    await rm(staging, { recursive: true, force: true });
    progress?.(5, 5, 'verified');
    return `${name} ${version} from ${spec.source}: integrity and ${spec.plugin.publisher}'s signature verified, plugin API ${entry.pluginApi}`;
  }

  install(name: string, progress?: Progress): Promise<string> {
    return this.runtime.serialized(async () => {
      this.#requireAllowed('module_install');
      await this.#checkName(name);
      if (await this.catalog.isBuiltin(name)) throw conflict(`${name} is a built-in module: a plugin may not take its name; enable it in the configuration instead`);
      const lock = await this.installed();
      if (lock[name]) throw conflict(`${name} ${lock[name].version} is already installed; use module_upgrade for a newer version`);
      if ((await this.catalog.available()).includes(name)) {
        throw conflict(`${name} is already under ${this.#dir} (put there by hand); remove that directory first`);
      }
      const { spec, version, entry } = await this.#candidate(name);
      const dir = await this.#stage(name, spec, version, entry, progress);
      await this.#switch(lock, name, { version, integrity: entry.integrity, source: spec.source, publisher: spec.plugin.publisher, summary: spec.plugin.summary, installed: new Date().toISOString() }, progress);
      this.logger.notice({ module: name, version, source: spec.source }, 'plugin %s %s installed and started', name, version);
      return `${name} ${version} installed from ${spec.source} into ${dir}`;
    });
  }

  upgrade(name: string, progress?: Progress): Promise<string> {
    return this.runtime.serialized(async () => {
      this.#requireAllowed('module_upgrade');
      await this.#checkName(name);
      const lock = await this.installed();
      const current = lock[name];
      if (!current) throw notFound(`${name} is not installed; use module_install`);
      const { spec, version, entry } = await this.#candidate(name);
      if (semver.lte(version, current.version)) return `${name} ${current.version} is the newest compatible version: nothing to upgrade`;
      await this.#stage(name, spec, version, entry, progress);
      await this.#switch(lock, name, { version, integrity: entry.integrity, source: spec.source, publisher: spec.plugin.publisher, summary: spec.plugin.summary, installed: new Date().toISOString() }, progress);
      await rm(versionDir(this.#dir, name, current.version), { recursive: true, force: true });
      this.logger.notice({ module: name, from: current.version, to: version }, 'plugin %s upgraded from %s to %s', name, current.version, version);
      return `${name} upgraded from ${current.version} to ${version}`;
    });
  }

  uninstall(name: string, progress?: Progress): Promise<string> {
    return this.runtime.serialized(async () => {
      await this.#checkName(name);
      const lock = await this.installed();
      const current = lock[name];
      if (!current) {
        if (await this.catalog.isBuiltin(name)) throw conflict(`${name} is a built-in module, not an installed plugin: disable it in the configuration instead`);
        throw notFound(`${name} is not installed`);
      }
      if (this.settings().configured.includes(name)) {
        throw conflict(`${name} is enabled in the configuration file (modules: ${name}); remove it there and run reload_config first`);
      }
      progress?.(0, 2, 'stopping');
      await this.#switch(lock, name, undefined);
      progress?.(1, 2, 'removing files');
      await rm(join(this.#dir, name), { recursive: true, force: true });
      progress?.(2, 2, 'uninstalled');
      this.logger.notice({ module: name, version: current.version }, 'plugin %s %s uninstalled', name, current.version);
      return `${name} ${current.version} uninstalled`;
    });
  }

  /** Pins `entry` (or removes the plugin) and applies; on failure puts the previous lock back and applies it. */
  async #switch(previous: PluginLock, name: string, entry: LockedPlugin | undefined, progress?: Progress): Promise<void> {
    const { [name]: old, ...others } = previous;
    const next: PluginLock = entry ? { ...others, [name]: entry } : others;
    await writeLock(this.#dir, next);
    this.catalog.invalidate();
    progress?.(4, 5, entry ? 'starting' : 'stopping');
    try {
      await this.runtime.applyModules();
    } catch (err) {
      this.logger.error({ err, module: name }, 'plugin %s: applying the change failed; restoring the previous state', name);
      await writeLock(this.#dir, previous);
      this.catalog.invalidate();
      await this.runtime.applyModules().catch((e: unknown) => this.logger.error({ err: e }, 'restoring the previous modules failed'));
      if (entry && entry.version !== old?.version) await rm(versionDir(this.#dir, name, entry.version), { recursive: true, force: true });
      throw failed(`${name}${entry ? ` ${entry.version}` : ''} did not start: ${(err as Error).message}${old ? `; ${old.version} runs again` : '; nothing was installed'}`);
    }
    progress?.(5, 5, 'done');
  }

  /** Downloads, verifies and unpacks a version into its version directory. Returns that directory. */
  async #stage(name: string, spec: AvailablePlugin, version: string, entry: RegistryVersion, progress?: Progress): Promise<string> {
    const staging = await this.#unpackVerified(name, spec, version, entry, progress);
    try {
      progress?.(3, 5, 'installing dependencies');
      await this.#installDependencies(name, staging, spec.source);
      const target = versionDir(this.#dir, name, version);
      await rm(target, { recursive: true, force: true });
      await mkdir(dirname(target), { recursive: true });
      await rename(staging, target);
      return target;
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /**
   * Downloads a version, checks its integrity, unpacks it into a staging directory and checks its package
   * and its publisher's signature (over the tarball's integrity, or over the unpacked content for npm
   * registries). Returns the staging directory; the caller removes it.
   */
  async #unpackVerified(name: string, spec: AvailablePlugin, version: string, entry: RegistryVersion, progress?: Progress): Promise<string> {
    progress?.(0, 5, `fetching ${name} ${version}`);
    const source = this.#sources().find((s) => s.id === spec.source);
    if (!source) throw failed(`${name}: its registry ${spec.source} is no longer configured; run modules_update_specs`);
    let bytes: Buffer;
    try {
      bytes = await source.tarball(name, entry);
    } catch (err) {
      throw failed((err as Error).message);
    }
    progress?.(1, 5, 'verifying');
    const trusted = this.settings().trustedKeys;
    const signed = (integrity: string) => checkSignature({ name, version, pluginApi: entry.pluginApi, integrity }, spec.plugin.publisher, entry.signature, trusted);
    try {
      checkIntegrity(name, bytes, entry.integrity);
      if (entry.signs !== 'content') signed(entry.integrity);
    } catch (err) {
      throw failed((err as Error).message);
    }
    const staging = join(this.#dir, '.staging', `${name}-${version}-${randomBytes(4).toString('hex')}`);
    try {
      progress?.(2, 5, 'unpacking');
      try {
        await unpackTarball(name, bytes, staging);
        if (entry.signs === 'content') signed(contentDigest(await packageFiles(staging)));
      } catch (err) {
        throw failed((err as Error).message);
      }
      await this.#checkPackage(name, version, staging);
      return staging;
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      throw err;
    }
  }

  /** The highest version of a plugin this server's plugin API can run. */
  async #candidate(name: string): Promise<{ spec: AvailablePlugin; version: string; entry: RegistryVersion }> {
    const spec = (await this.available()).find((p) => p.name === name);
    if (!spec) throw notFound(`${name} is not in any registry (${this.settings().sources.join(', ')}); run modules_update_specs to refresh them`);
    const versions = Object.keys(spec.plugin.versions).filter((v) => semver.valid(v)).sort(semver.rcompare);
    const compatible = versions.find((v) => semver.satisfies(PLUGIN_API_VERSION, spec.plugin.versions[v]!.pluginApi, { includePrerelease: true }));
    if (!compatible) {
      const wants = versions.map((v) => `${v} needs ${spec.plugin.versions[v]!.pluginApi}`).join(', ') || 'no version';
      throw failed(`${name}: no version is compatible with this server's plugin API ${PLUGIN_API_VERSION} (${wants})`);
    }
    return { spec, version: compatible, entry: spec.plugin.versions[compatible]! };
  }

  async #checkPackage(name: string, version: string, dir: string): Promise<void> {
    let pkg: { name?: string; version?: string; scripts?: Record<string, string>; service?: { module?: string } };
    try {
      pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
    } catch (err) {
      throw failed(`${name}: the tarball has no readable package.json (${(err as Error).message})`);
    }
    if (pkg.service?.module !== name) throw failed(`${name}: its package.json declares module '${pkg.service?.module ?? '(none)'}' in "service"; expected '${name}'`);
    if (pkg.version !== version) throw failed(`${name}: the tarball holds version ${pkg.version}, but the registry lists it as ${version}`);
    const scripts = INSTALL_SCRIPTS.filter((s) => pkg.scripts?.[s] !== undefined);
    if (scripts.length) throw failed(`${name}: it declares install scripts (${scripts.join(', ')}), which are not allowed: a plugin must not run code when installed`);
  }

  /** Production dependencies, except the server's own packages (the resolve hook gives plugins those). */
  async #installDependencies(name: string, dir: string, sourceId: string): Promise<void> {
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    const needed = Object.keys(pkg.dependencies ?? {}).filter((d) => !d.startsWith('@service/'));
    if (!needed.length) return;
    try {
      // From an npm registry, dependencies come from it too; otherwise from npm's configured registry.
      const registry = this.#sources().find((s) => s.id === sourceId)?.npmRegistry;
      const args = ['install', '--omit=dev', '--legacy-peer-deps', '--ignore-scripts', '--no-save', '--no-audit', '--no-fund', '--no-package-lock', ...(registry ? ['--registry', registry] : [])];
      await run('npm', [...args, ...needed.map((d) => `${d}@${pkg.dependencies![d]}`)], {
        cwd: dir,
        timeout: 10 * 60_000,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (err) {
      const stderr = (err as { stderr?: string }).stderr?.trim().split('\n').slice(-3).join(' ') ?? '';
      throw failed(`${name}: its dependencies could not be installed (${needed.join(', ')}): ${stderr || (err as Error).message}`);
    }
  }

  #requireAllowed(command: string): void {
    if (!this.settings().allowed) throw failed(`${command} is disabled: allow_contrib_modules is false in the configuration`);
  }

  async #checkName(name: string): Promise<void> {
    if (!MODULE_NAME.test(name)) throw badArgument('module', `argument 'module' ('${name}') is not a module name: lower-case letters, digits and _, starting with a letter`);
  }

  #sources(): RegistrySource[] {
    const { sources, baseDir } = this.settings();
    return sources.map((spec) => openSource(spec, baseDir));
  }

  async #cacheSpecs(sources: Record<string, RegistryIndex>): Promise<void> {
    await mkdir(this.#dir, { recursive: true });
    await writeFile(join(this.#dir, SPECS_FILE), `${JSON.stringify({ fetched: new Date().toISOString(), sources }, null, 2)}\n`);
  }

  async #cachedSpecs(): Promise<Record<string, RegistryIndex> | undefined> {
    try {
      return (JSON.parse(await readFile(join(this.#dir, SPECS_FILE), 'utf8')) as { sources: Record<string, RegistryIndex> }).sources;
    } catch {
      return undefined;
    }
  }
}

/** Every file of an unpacked package, with its path relative to the package root. */
async function packageFiles(root: string): Promise<PackageFile[]> {
  const files: PackageFile[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(join(dir, entry.name), path);
      else if (entry.isFile()) files.push({ path, bytes: await readFile(join(dir, entry.name)) });
    }
  };
  await walk(root, '');
  return files;
}
