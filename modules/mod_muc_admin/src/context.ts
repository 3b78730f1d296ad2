/**
 * What every command area of mod_muc_admin gets: the running MUC service (mod_muc, a required
 * consumption: without it this module does not start), the module's options and the server's services.
 * One object so that each area's handlers are written against the same few things.
 */
import type { ServerServices } from '@service/plugin-api';
import type { MucApi } from '@service/mod_muc/api';

export interface MucAdminOptions {
  /** The most users one subscribe_room_many call may subscribe. */
  readonly subscribe_room_many_max_users: number;
}

export interface MucAdminContext {
  /** mod_muc's service, looked up at each call (it is the instance running now, after a restart of mod_muc too). */
  muc(): MucApi;
  readonly options: MucAdminOptions;
  readonly services: ServerServices;
}
