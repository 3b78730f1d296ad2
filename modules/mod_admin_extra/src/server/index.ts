/**
 * Module code at runtime (ejabberd's "erlang" tag): restart_module, which reloads a running module's code
 * when it changed on disk and restarts it, through the server's ModulesApi.
 */
import { asCommandError, defineCommand, type HandlersFor } from '@service/plugin-api';
import type { AdminContext } from '../context.js';

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
  };
}
