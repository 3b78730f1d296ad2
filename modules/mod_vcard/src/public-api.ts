/**
 * What other modules import of mod_vcard (`@service/mod_vcard/api`): the vCard service's reference and
 * type, no code of the module. The admin commands (get_vcard, set_vcard and their variants, set_nickname)
 * get the running service with `ctx.find(vcardService)`.
 */
import { createServiceRef } from '@service/plugin-api';
import type { VcardApi } from './api.js';

export type { VcardApi } from './api.js';

export const vcardService = createServiceRef<VcardApi>({ id: 'mod_vcard.vcard', provider: 'mod_vcard' });
