/**
 * What other modules import of mod_last (`@service/mod_last/api`): the last activity service's reference
 * and types, no code of the module. The admin commands (get_last, set_last, ban_account, delete_old_users)
 * get the running service with `ctx.find(lastActivityService)`.
 */
import { createServiceRef } from '@service/plugin-api';
import type { LastActivityApi } from './api.js';

export type { LastActivityApi, LastActivityRecord } from './api.js';

export const lastActivityService = createServiceRef<LastActivityApi>({ id: 'mod_last.last_activity', provider: 'mod_last' });
