/**
 * What other modules import of mod_offline (`@service/mod_offline/api`): the offline message service's
 * reference and types, no code of the module. The admin commands (get_offline_count, the purges) get the
 * running service with `ctx.find(offlineService)`.
 */
import { createServiceRef } from '@service/plugin-api';
import type { OfflineApi } from './api.js';

export type { OfflineApi, OfflineMessage } from './api.js';

export const offlineService = createServiceRef<OfflineApi>({ id: 'mod_offline.offline', provider: 'mod_offline' });
