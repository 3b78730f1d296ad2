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
  /**
   * Type-checks a module's TypeScript source file against the plugin API and emits its JavaScript; a
   * running module is then reloaded with its new code. A relative path is relative to data_dir. Throws a
   * CommandError: bad_argument for a file that is not a module's source, failed with each compiler error as
   * `file:line:column: TSnnnn message`.
   */
  compile(file: string): Promise<CompileResult>;
}

export interface CompileResult {
  /** The module the file belongs to. */
  readonly module: string;
  /** The JavaScript files written, relative to the module's directory. */
  readonly emitted: readonly string[];
  /** Whether the module was running and now runs the new code. */
  readonly reloaded: boolean;
}
