/**
 * Restarting modules and reloading their code on a running server: restart_module and compile (through the
 * plugin API's ModulesApi, for mod_admin_extra), update_list and update. A module's code is reloaded as a whole graph
 * (catalog.ts, resolve-hooks.ts), then the manager restarts it and what depends on it; everything else keeps
 * serving. Changes run one at a time, in the server's queue of module changes.
 */
import { notFound, type CompileResult, type ModulesApi } from '@service/plugin-api';
import type { Config } from '../config/load.js';
import type { Logger } from '../log/logger.js';
import type { ModuleRuntime } from '../plugins/installer.js';
import type { ModuleCatalog } from './catalog.js';
import { compilePluginSource } from './compile.js';
import type { ModuleManager } from './manager.js';

export class ModuleAdministration implements ModulesApi {
  #manager?: ModuleManager;

  constructor(
    private readonly catalog: ModuleCatalog,
    private readonly runtime: ModuleRuntime,
    /** The running configuration (hosts, data_dir); it changes on reload_config. */
    private readonly config: () => Pick<Config, 'hosts' | 'dataDir'>,
    private readonly logger: Logger,
  ) {}

  /** The manager is made after the services it serves; it is attached once made. */
  attach(manager: ModuleManager): void {
    this.#manager = manager;
  }

  get #modules(): ModuleManager {
    if (!this.#manager) throw new Error('the module manager is not attached yet');
    return this.#manager;
  }

  restart(module: string, host: string): Promise<'reloaded' | 'restarted'> {
    return this.runtime.serialized(async () => {
      const vhost = this.config().hosts.find((h) => h.toLowerCase() === host.toLowerCase());
      if (!vhost) throw notFound(`host '${host}' is not a virtual host of this server`);
      const instances = this.#modules.instancesOf(module);
      const instance = instances.find((i) => i.host === vhost) ?? instances.find((i) => i.host === undefined);
      if (!instance) throw notFound(`module ${module} is not running on ${vhost}`);
      if (await this.catalog.changedOnDisk(module)) {
        await this.catalog.definition(module, { reload: true });
        await this.runtime.applyModules();
        this.logger.notice({ module }, 'module %s: code reloaded and restarted', module);
        return 'reloaded';
      }
      await this.runtime.applyModules({ restart: [instance.key] });
      this.logger.notice({ module, host: instance.host }, 'module %s restarted', instance.key);
      return 'restarted';
    });
  }

  compile(file: string): Promise<CompileResult> {
    return this.runtime.serialized(async () => {
      const { module, emitted } = await compilePluginSource(this.catalog, file, this.config().dataDir);
      this.logger.notice({ module, emitted }, 'compiled %s: %s', module, emitted.join(', ') || 'nothing emitted');
      if (!this.#modules.isRunning(module) || !(await this.catalog.changedOnDisk(module))) return { module, emitted, reloaded: false };
      await this.catalog.definition(module, { reload: true });
      await this.runtime.applyModules();
      return { module, emitted, reloaded: true };
    });
  }

  /** Running modules whose code on disk differs from what they run. */
  async changed(): Promise<string[]> {
    const names = [...new Set(this.#modules.running().map((key) => key.split('@')[0]!))].sort();
    const out: string[] = [];
    for (const name of names) if (await this.catalog.changedOnDisk(name)) out.push(name);
    return out;
  }

  /** Reloads the code of `module` (or of every changed module for `all`) and restarts it. Returns the names updated. */
  update(module: string): Promise<string[]> {
    return this.runtime.serialized(async () => {
      let targets: string[];
      if (module === 'all') targets = await this.changed();
      else {
        if (!this.#modules.isRunning(module)) throw notFound(`module ${module} is not running`);
        targets = (await this.catalog.changedOnDisk(module)) ? [module] : [];
      }
      if (!targets.length) return [];
      for (const name of targets) await this.catalog.definition(name, { reload: true });
      await this.runtime.applyModules();
      this.logger.notice({ modules: targets }, 'code reloaded: %s', targets.join(', '));
      return targets;
    });
  }
}
