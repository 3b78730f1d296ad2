/**
 * What clients keep on their account besides the roster: vCards (get_vcard, set_vcard, get_vcard2,
 * set_vcard2, get_vcard2_multi, set_vcard2_multi, set_nickname), private storage (private_get,
 * private_set), last activity (get_last, set_last) and offline messages (get_offline_count).
 */
import type { HandlersFor } from '@service/plugin-api';
import type { AdminContext } from '../context.js';
import { lastCommands, lastHandlers } from './last.js';
import { offlineCommands, offlineHandlers } from './offline.js';
import { privateCommands, privateHandlers } from './private.js';
import { vcardFieldCommands, vcardFieldHandlers } from './vcard.js';

export const vcardCommands = [...vcardFieldCommands, ...privateCommands, ...lastCommands, ...offlineCommands] as const;

export function vcardHandlers(ctx: AdminContext): HandlersFor<typeof vcardCommands> {
  return {
    ...vcardFieldHandlers(ctx),
    ...privateHandlers(ctx),
    ...lastHandlers(ctx),
    ...offlineHandlers(ctx),
  };
}
