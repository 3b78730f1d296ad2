/**
 * Enforcing blocklists (XEP-0191 §3.3) on the router's chains:
 *
 *   deliver    a stanza from a blocked JID is not delivered: messages and IQ get/set are answered with
 *              <service-unavailable/> (the account looks offline), presence and the rest are dropped
 *              silently. Presence the server sends on behalf of a local account (broadcasts, probe
 *              answers) to a JID that account blocks is dropped too: that is where broadcasts are seen.
 *   user_send  a stanza the account sends to a JID it blocks is refused with <not-acceptable/> and
 *              <blocked xmlns='urn:xmpp:blocking:errors'/>.
 *
 * Never between an account's own resources, nor with its own server's domain (server pings, errors),
 * whatever the list says: a user blocking their domain means its users, not the service itself.
 */
import { x, type DeliverContext, type Jid, type RouterApi, type SendContext, type XmlElement } from '@service/plugin-api';
import { isCovered } from './jid-match.js';
import { NS_BLOCKING_ERRORS } from './ns.js';
import type { PresenceOnChange } from './presence-on-change.js';
import { StanzaError } from '@service/plugin-api';
import type { BlocklistStore } from './store.js';

export class BlockingEnforcement {
  constructor(
    private readonly store: BlocklistStore,
    private readonly presence: PresenceOnChange,
    private readonly router: RouterApi,
  ) {}

  async onDeliver(ctx: DeliverContext, next: () => Promise<void>): Promise<void> {
    const { stanza, from, to } = ctx;
    const recipient = to.toBare();
    if (!isAlwaysAllowed(recipient, from) && isCovered(await this.store.list(recipient), from)) return this.#refuseInbound(stanza);
    if (stanza.name === 'presence' && this.#isLocalAccount(from) && !this.presence.isExempt(stanza)) {
      const sender = from.toBare();
      if (!isAlwaysAllowed(sender, to) && isCovered(await this.store.list(sender), to)) return;
    }
    await next();
  }

  async onSend(ctx: SendContext, next: () => Promise<void>): Promise<void> {
    const { to, session } = ctx;
    if (to && !isAlwaysAllowed(session.account, to) && isCovered(await this.store.list(session.account), to)) {
      const blocked = x('blocked', { xmlns: NS_BLOCKING_ERRORS });
      return this.router.bounce(ctx.stanza, new StanzaError('not-acceptable', 'you block this address', 'cancel', blocked));
    }
    await next();
  }

  async #refuseInbound(stanza: XmlElement): Promise<void> {
    // bounce() answers neither errors nor IQ results: those are dropped, as the XEP wants.
    if (stanza.name === 'message' || stanza.name === 'iq') await this.router.bounce(stanza, new StanzaError('service-unavailable'));
  }

  #isLocalAccount(jid: Jid): boolean {
    return jid.user !== undefined && this.router.isLocalHost(jid.host);
  }
}

function isAlwaysAllowed(account: Jid, other: Jid): boolean {
  if (other.bare === account.bare) return true;
  return other.user === undefined && other.resource === undefined && other.host === account.host;
}
