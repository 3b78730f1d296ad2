/**
 * Module administration a module may ask of the server (mod_admin_extra's restart_module, for one): restart
 * a running module, reloading its code when its files changed on disk.
 */
export interface ModulesApi {
  /**
   * Restarts a running module (its instance on `host` when it runs per host; the whole-server instance
   * otherwise, `host` then only has to be a virtual host of this server). Resolves `reloaded` when its code
   * changed on disk and was loaded again, `restarted` when the same code was restarted. Throws a
   * CommandError (not_found) when the module does not run there.
   */
  restart(module: string, host: string): Promise<'reloaded' | 'restarted'>;
}
