/**
 * What other modules import of mod_shared_roster (`@service/mod_shared_roster/api`): the shared roster
 * service's reference and types, no code of the module. mod_admin_extra's srg_* commands get the running
 * service with `ctx.find(sharedRosterService)`.
 */
import { createServiceRef } from '@service/plugin-api';
import type { SharedRosterApi } from './api.js';

export type { GroupArgs, GroupInfo, MemberArgs, SharedRosterApi } from './api.js';

export const sharedRosterService = createServiceRef<SharedRosterApi>({ id: 'mod_shared_roster.shared_roster', provider: 'mod_shared_roster' });
