/**
 * What other modules import of mod_offline (`@service/mod_offline/api`): the offline message service's
 * reference and types, no code of the module, and the hook it runs when it stores a message. The admin
 * commands (get_offline_count, the purges) get the running service with `ctx.find(offlineService)`.
 */
import { createServiceRef, type Jid, type XmlElement } from '@service/plugin-api';
import type { OfflineApi } from './api.js';

declare module '@service/plugin-api' {
  interface HookMap {
    /**
     * mod_offline stored a message for an account with no session taking messages (XEP-0160): the message
     * as it arrived, its sender, and the account (bare). Runs once per stored message, after it is stored
     * and before it is delivered to a session that came online meanwhile; not for messages refused (a full
     * queue) or dropped. Push notifications (mod_push) wake the account's devices from here. A handler's
     * failure is logged and changes nothing for the message.
     */
    offline_message_stored: [message: XmlElement, from: Jid, to: Jid];
  }
}

export type { OfflineApi, OfflineMessage } from './api.js';

export const offlineService = createServiceRef<OfflineApi>({ id: 'mod_offline.offline', provider: 'mod_offline' });
