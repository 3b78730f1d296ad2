/**
 * Shared roster groups (srg_*), through mod_shared_roster.
 */
import type { HandlersFor } from '@service/kernel';
import type { AdminContext } from '../context.js';

export const sharedRosterCommands = [] as const;

export function sharedRosterHandlers(_ctx: AdminContext): HandlersFor<typeof sharedRosterCommands> {
  return {} as HandlersFor<typeof sharedRosterCommands>;
}
