/**
 * What other modules import of mod_private (`@service/mod_private/api`): the private storage service's
 * reference and types, no code of the module. The admin commands (private_get, private_set, the bans of
 * ban_account) get the running service with `ctx.find(privateStorageService)`.
 */
import { createServiceRef } from '@service/plugin-api';
import type { PrivateStorageApi } from './api.js';

export type { ClaimedNamespace, PrivateStorageApi } from './api.js';

export const privateStorageService = createServiceRef<PrivateStorageApi>({ id: 'mod_private.private_storage', provider: 'mod_private' });
