/**
 * What becomes of the stanzas a session never acknowledged when it ends for good (XEP-0198 §5: treated as
 * stanzas sent to a resource that is no longer available). Each is handled as if it had been addressed to
 * that session's full JID now, by RFC 6121 §8.5.3.2:
 *
 *   - a chat or normal message goes back to routing, once: to the account's other resources, or to offline
 *     storage — unless another session got the same delivery (a bare-JID fan-out) and has it or may still
 *     acknowledge it (see Deliveries). It keeps its original 'to', and carries one XEP-0203 <delay/> from
 *     the server with the time it first arrived (a message that already has the server's stamp, from
 *     offline storage, keeps that one);
 *   - groupchat, headline and error messages are dropped, as for any full JID that is gone;
 *   - a message from the account's own bare JID is a copy the server made for that one session (carbons,
 *     XEP-0280 §5): its original went where it had to, so it is dropped;
 *   - an IQ request gets <service-unavailable/> back to whoever asked, unless the server itself asked (a
 *     ping, a roster or blocklist push): nobody is waiting for that answer;
 *   - presence is dropped: what it said is stale, and subscription requests live on in the roster.
 */
import { StanzaError, x, type C2SSession, type Logger, type RouterApi, type XmlElement } from '@service/plugin-api';
import type { Deliveries } from './deliveries.js';

const NS_DELAY = 'urn:xmpp:delay';

export class Unacknowledged {
  constructor(
    private readonly router: RouterApi,
    private readonly deliveries: Deliveries,
    private readonly logger: Logger,
  ) {}

  /** `pending` are the stanzas `session` (now ended) never acknowledged, oldest first. */
  async settle(session: C2SSession, pending: readonly XmlElement[]): Promise<void> {
    let rerouted = 0;
    for (const stanza of pending) {
      try {
        if (stanza.name === 'message' && (await this.#message(session, stanza))) rerouted++;
        else if (stanza.name === 'iq') await this.#iq(session, stanza);
      } catch (err) {
        // One stanza that cannot be routed must not cost the others their turn.
        this.logger.error({ err, jid: session.jid.full, stanza: stanza.name }, 'an unacknowledged stanza could not be handled');
      }
    }
    if (pending.length) this.logger.debug({ jid: session.jid.full, unacknowledged: pending.length, rerouted }, 'session ended with unacknowledged stanzas');
  }

  /** Resolves true when the message went back to routing. */
  async #message(session: C2SSession, message: XmlElement): Promise<boolean> {
    const type = message.attr('type') ?? 'normal';
    if (type !== 'chat' && type !== 'normal') return false;
    if (message.attr('from') === session.account.bare) return false;
    if (!this.deliveries.lose(message, session)) return false;
    await this.router.route(this.#stamped(message, session.jid.host));
    return true;
  }

  /**
   * A copy with the server's <delay/> (the time the message first reached a session). A copy, because the
   * element may still be referenced as what was sent (other queues, privacy's bookkeeping), and because the
   * routing that follows is a new delivery, with its own record of who gets it.
   */
  #stamped(message: XmlElement, host: string): XmlElement {
    const copy = message.clone();
    if (copy.getChildren('delay', NS_DELAY).some((d) => d.attr('from') === host)) return copy;
    const stamp = new Date(this.deliveries.firstAt(message) ?? Date.now()).toISOString();
    return copy.append(x('delay', { xmlns: NS_DELAY, from: host, stamp }));
  }

  async #iq(session: C2SSession, iq: XmlElement): Promise<void> {
    const type = iq.attr('type');
    if (type !== 'get' && type !== 'set') return;
    const from = iq.attr('from');
    if (from === undefined || from === session.jid.host || from === session.account.bare) return;
    await this.router.bounce(iq, new StanzaError('service-unavailable', 'the recipient\'s session ended before it answered'));
  }
}
