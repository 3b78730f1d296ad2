/**
 * Rosters: add_rosteritem, delete_rosteritem, get_roster, get_roster_count, process_rosteritems, push_roster, push_roster_all, push_alltoall.
 */
import type { HandlersFor } from '@service/kernel';
import type { AdminContext } from '../context.js';

export const rosterCommands = [] as const;

export function rosterHandlers(_ctx: AdminContext): HandlersFor<typeof rosterCommands> {
  return {} as HandlersFor<typeof rosterCommands>;
}
