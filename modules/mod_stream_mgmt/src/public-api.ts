/**
 * What other modules import of mod_stream_mgmt (`@service/mod_stream_mgmt/api`): the hook it runs when it
 * keeps a session whose connection was lost, and nothing of its code. Push notifications (mod_push) wake
 * the device from there when the client never acknowledged a message written to it before the loss.
 */
import type { C2SSession, XmlElement } from '@service/plugin-api';

declare module '@service/plugin-api' {
  interface HookMap {
    /**
     * A resumable session lost its connection and is kept, detached, for its resumption timeout (not run
     * for a session that ends at once). `unacknowledged`: what was written to it and not acknowledged,
     * oldest first, as it will be resent on resumption (a copy: the queue is the module's). Runs once per
     * loss, not awaited by the stream's end; a handler's failure is logged.
     */
    sm_session_detached: [session: C2SSession, unacknowledged: readonly XmlElement[]];
  }
}

export {};
