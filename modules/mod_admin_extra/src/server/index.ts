/**
 * Module code at runtime (ejabberd's "erlang" tag): restart_module, which reloads a running module's code
 * when it changed on disk and restarts it, and compile, which type-checks and compiles a module's TypeScript
 * source and reloads it; both through the server's ModulesApi. And get_cookie, the cluster's shared secret
 * (mod_cluster's).
 */
import { asCommandError, defineCommand, type HandlersFor } from '@service/plugin-api';
import { clusterService } from '@service/mod_cluster/api';
import { need, type AdminContext } from '../context.js';

/** restart_module's results, as ejabberd numbers them. */
const RELOADED = 0;
const NOT_LOADED = 1;
const RESTARTED = 2;

export const serverCommands = [
  defineCommand({
    name: 'restart_module',
    tags: ['erlang'],
    desc: 'Stop an ejabberd module, reload code and start',
    longdesc:
      'Restarts a running module on a virtual host (a module that runs for the whole server restarts once, for every host), with the modules that depend on it; other modules keep serving. ' +
      'When its files changed on disk since it was loaded, its whole code is loaded again first. ' +
      'Returns 0 when the code was reloaded and the module restarted, 2 when the same code was restarted, ' +
      '1 when the module is not running on that host, the host is not served, or the restart failed (the reason is logged).',
    args: [
      { name: 'host', type: 'string', desc: 'A virtual host of this server', example: 'localhost' },
      { name: 'module', type: 'string', desc: 'A running module', example: 'mod_version' },
    ],
    result: { name: 'res', type: 'integer', desc: '0 = code reloaded and module restarted; 1 = error, module not loaded; 2 = code not reloaded but module restarted' },
    examples: [{ args: { host: 'localhost', module: 'mod_version' }, result: 2 }],
  }),
  defineCommand({
    name: 'compile',
    tags: ['erlang'],
    desc: 'Recompile and reload source file',
    longdesc:
      "Type-checks a module's TypeScript source file against this server's plugin API, writes its JavaScript (with the module's own tsconfig.json, or beside the source without one), " +
      'and, when the module runs, reloads its whole code and restarts it; other modules keep serving. ' +
      'The file must belong to a local plugin under <data_dir>/plugins/<name>/ or a built-in module (installed plugins are immutable: publish a new version). ' +
      'A relative path is relative to data_dir. Compiler errors fail the command (422) with each error as file:line:column: TSnnnn message, and nothing is written or reloaded. ' +
      'Needs the typescript package beside the server.',
    args: [{ name: 'file', type: 'string', desc: 'Path of the TypeScript source file', example: 'plugins/mod_local/src/index.ts' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { file: 'plugins/mod_local/src/index.ts' }, result: 0 }],
  }),
  defineCommand({
    name: 'get_cookie',
    tags: ['erlang'],
    desc: 'Get the Erlang cookie of this node',
    longdesc:
      "The cluster's shared secret (mod_cluster's `cookie`): a node configured with another one is refused. " +
      'Fails (422) when mod_cluster is not enabled. The answer is never written to the log.',
    args: [],
    result: { name: 'cookie', type: 'string' },
    examples: [{ args: {}, result: 'a-long-random-secret' }],
  }),
] as const;

export function serverHandlers(ctx: AdminContext): HandlersFor<typeof serverCommands> {
  return {
    restart_module: async ({ host, module }, call) => {
      try {
        return (await ctx.services.modules.restart(module, host)) === 'reloaded' ? RELOADED : RESTARTED;
      } catch (err) {
        const error = asCommandError(err);
        call.log.warn({ module, host }, 'restart_module: %s', error?.message ?? (err as Error).message);
        return NOT_LOADED;
      }
    },
    get_cookie: () => need(ctx, clusterService, 'get_cookie').cookie(),
    compile: async ({ file }, call) => {
      call.progress(0, 1, `compiling ${file}`);
      const result = await ctx.services.modules.compile(file);
      call.progress(1, 1, result.reloaded ? `${result.module} reloaded` : 'compiled');
      call.log.info({ module: result.module, emitted: result.emitted, reloaded: result.reloaded }, 'compiled %s', file);
    },
  };
}
