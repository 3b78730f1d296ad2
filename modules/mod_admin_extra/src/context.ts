/**
 * What every command area of mod_admin_extra gets: the module context, and `need` for the modules a
 * command works through (mod_roster, mod_vcard…). They are optional dependencies, looked up at each call:
 * a command whose module is not enabled fails with a message that names it, rather than not existing —
 * as in ejabberd, where mod_admin_extra's commands exist whatever else runs.
 */
import { CommandError, type ModuleContext } from '@service/plugin-api';

export interface AdminContext extends ModuleContext<Record<string, unknown>> {
  /** Work to undo when mod_admin_extra stops (hooks go by themselves; claims on other modules do not). */
  onStop(cleanup: () => void): void;
}

/** The modules mod_admin_extra works through; all optional. */
export const ADMIN_EXTRA_USES = ['mod_roster', 'mod_presence', 'mod_vcard', 'mod_private', 'mod_last', 'mod_offline', 'mod_privacy', 'mod_shared_roster'] as const;

export type UsedModule = (typeof ADMIN_EXTRA_USES)[number];

/** The api of `module`, or a `failed` error saying that `command` needs it enabled. */
export function need<T>(ctx: AdminContext, module: UsedModule, command: string): T {
  const api = ctx.depends<T | undefined>(module);
  if (api === undefined) throw new CommandError('failed', `${command} needs ${module}, which is not enabled: add it to modules`);
  return api;
}
