/**
 * Rosters: add_rosteritem, delete_rosteritem, get_roster, get_roster_count (items.ts), process_rosteritems
 * (process.ts, its filter grammar in filter.ts), push_roster and push_roster_all (push-roster.ts, the file
 * format in push-file.ts), push_alltoall (push-alltoall.ts). All of them work through mod_roster's API.
 */
import type { HandlersFor } from '@service/plugin-api';
import type { AdminContext } from '../context.js';
import { itemCommands, itemHandlers } from './items.js';
import { processCommands, processHandlers } from './process.js';
import { pushAlltoallCommands, pushAlltoallHandlers } from './push-alltoall.js';
import { pushRosterCommands, pushRosterHandlers } from './push-roster.js';

export const rosterCommands = [...itemCommands, ...processCommands, ...pushRosterCommands, ...pushAlltoallCommands] as const;

export function rosterHandlers(ctx: AdminContext): HandlersFor<typeof rosterCommands> {
  return {
    ...itemHandlers(ctx),
    ...processHandlers(ctx),
    ...pushRosterHandlers(ctx),
    ...pushAlltoallHandlers(ctx),
  } as HandlersFor<typeof rosterCommands>;
}
