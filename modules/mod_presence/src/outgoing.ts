/**
 * user_send: a client's presence. Without 'to' it is a broadcast (the kernel routes none of those);
 * with 'to' someone else it is directed presence, remembered for when the session goes away.
 */
import type { Middleware, SendContext } from '@service/plugin-api';
import type { PresenceBroadcast } from './broadcast.js';
import { isAvailability } from './stanzas.js';

export function outgoingPresence(broadcast: PresenceBroadcast): Middleware<SendContext> {
  // Not async itself: every stanza a client sends crosses this layer, and most are not presence.
  return (ctx, next) => (isAvailability(ctx.stanza) ? next().then(() => afterSent(ctx)) : next());

  async function afterSent(ctx: SendContext): Promise<void> {
    const { session, stanza, to } = ctx;
    if (to === undefined) {
      if (stanza.attr('type') === 'unavailable') await broadcast.unavailable(session, stanza);
      else await broadcast.available(session, stanza);
      return;
    }
    // Presence to the account itself reaches its available resources (the kernel's default): nothing to remember.
    if (to.bare !== session.account.bare) broadcast.trackDirected(session, to, stanza.attr('type'));
  }
}
