/**
 * What every command area of mod_admin_extra gets: the module context, and `need` for the services a
 * command works through (mod_roster's, mod_vcard's…). They are optional consumptions, looked up at each
 * call: a command whose module is not enabled fails with a message that names it, rather than not
 * existing — as in ejabberd, where mod_admin_extra's commands exist whatever else runs.
 */
import { CommandError, type ModuleContext, type ServiceRef } from '@service/plugin-api';
import { clusterService } from '@service/mod_cluster/api';
import { lastActivityService } from '@service/mod_last/api';
import { mucService } from '@service/mod_muc/api';
import { offlineService } from '@service/mod_offline/api';
import { privacyService } from '@service/mod_privacy/api';
import { privateStorageService } from '@service/mod_private/api';
import { rosterService } from '@service/mod_roster/api';
import { sharedRosterService } from '@service/mod_shared_roster/api';
import { vcardService } from '@service/mod_vcard/api';

export interface AdminContext extends ModuleContext<Record<string, unknown>> {
  /** Work to undo when mod_admin_extra stops (hooks go by themselves; claims on other modules do not). */
  onStop(cleanup: () => void): void;
}

/** The services mod_admin_extra works through; all optional (see `consumes` in index.ts). */
export const ADMIN_EXTRA_USES = [rosterService, vcardService, privateStorageService, lastActivityService, offlineService, privacyService, sharedRosterService, clusterService, mucService] as const;

/** The running implementation of `ref`, or a `failed` error saying that `command` needs its module enabled. */
export function need<T>(ctx: AdminContext, ref: ServiceRef<T>, command: string): T {
  const service = ctx.find(ref);
  if (service === undefined) throw new CommandError('failed', `${command} needs ${ref.provider}, which is not enabled: add it to modules`);
  return service;
}
