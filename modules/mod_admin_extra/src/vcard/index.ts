/**
 * vCards: get_vcard, set_vcard, get_vcard2, set_vcard2, get_vcard2_multi, set_vcard2_multi, set_nickname.
 */
import type { HandlersFor } from '@service/kernel';
import type { AdminContext } from '../context.js';

export const vcardCommands = [] as const;

export function vcardHandlers(_ctx: AdminContext): HandlersFor<typeof vcardCommands> {
  return {} as HandlersFor<typeof vcardCommands>;
}
