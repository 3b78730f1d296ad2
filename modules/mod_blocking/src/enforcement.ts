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

  /**
   * The deliver layer. With the lists concerned cached and nothing blocked (the common case) it calls `next`
   * without an async frame: it is on the path of every stanza.
   */
  onDeliver(ctx: DeliverContext, next: () => Promise<void>): Promise<void> {
    const { stanza, from, to } = ctx;
    const inbound = this.#blocks(to.toBare(), from);
    if (inbound === false && !this.#isBroadcastOfLocal(stanza, from)) return next();
    return this.#deliverChecked(ctx, next, inbound);
  }

  async #deliverChecked(ctx: DeliverContext, next: () => Promise<void>, inbound: boolean | Promise<boolean>): Promise<void> {
    const { stanza, from, to } = ctx;
    if (await inbound) return this.#refuseInbound(stanza);
    if (this.#isBroadcastOfLocal(stanza, from) && (await this.#blocks(from.toBare(), to))) return;
    await next();
  }

  /** The user_send layer; as onDeliver, a stanza to a JID not blocked passes straight through. */
  onSend(ctx: SendContext, next: () => Promise<void>): Promise<void> {
    const { to, session } = ctx;
    const blocked = to ? this.#blocks(session.account, to) : false;
    if (blocked === false) return next();
    return this.#sendChecked(ctx, next, blocked);
  }

  async #sendChecked(ctx: SendContext, next: () => Promise<void>, blocked: boolean | Promise<boolean>): Promise<void> {
    if (await blocked) {
      const error = x('blocked', { xmlns: NS_BLOCKING_ERRORS });
      return this.router.bounce(ctx.stanza, new StanzaError('not-acceptable', 'you block this address', 'cancel', error));
    }
    await next();
  }

  /** Whether `account` blocks `other`: at once when its list is cached, else once it is read. */
  #blocks(account: Jid, other: Jid): boolean | Promise<boolean> {
    if (isAlwaysAllowed(account, other)) return false;
    const known = this.store.peek(account);
    return known ? isCovered(known, other) : this.store.list(account).then((list) => isCovered(list, other));
  }

  /**
   * Presence the server sends on behalf of a local account (broadcasts, probe answers): that account's own
   * list decides too, since that is where broadcasts are seen.
   */
  #isBroadcastOfLocal(stanza: XmlElement, from: Jid): boolean {
    return stanza.name === 'presence' && this.#isLocalAccount(from) && !this.presence.isExempt(stanza);
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
