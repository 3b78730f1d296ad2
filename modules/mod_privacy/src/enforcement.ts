/**
 * Enforcing privacy lists on the router's chains (XEP-0016 §2.2, §2.13). The list that applies to a
 * session is its active list, else the account's default list ("no layering"):
 *
 *   deliver       inbound stanzas against the default list — unless a session they may reach has an
 *                 active list, in which case each session decides in user_receive. Presence the server
 *                 sends on behalf of a local account (broadcasts, probe answers) is checked here against
 *                 that account's list as presence-out, since broadcasts never pass user_send one by one.
 *   user_receive  each session's own list, for what the deliver layer left to it.
 *   user_send     the sender's list for outbound stanzas: <not-acceptable/> when denied.
 *
 * Refused inbound stanzas are answered as §2.13 says: messages and IQ get/set with
 * <service-unavailable/>, presence (and IQ results, errors) dropped. Nothing is ever filtered between an
 * account's own resources (§2.1 note), nor with its own server's domain (server pings and errors); error
 * stanzas reaching a session are not filtered either, so that the refusals above reach their sender.
 *
 * A stanza the deliver chain hands to several sessions (a message to the bare JID, at equal priority) is
 * answered once, and only when every one of them refused it: an error tells the sender the stanza was not
 * processed (RFC 6120 §8.3), which is false once another resource got it. So during a delivery a session's
 * refusal is only recorded, and the deliver layer decides after the fan-out. A stanza written to a session
 * outside any delivery (stored offline messages, probe answers) is answered at once, as before.
 */
import { Jid, StanzaError, type C2SSession, type DeliverContext, type ReceiveContext, type RouterApi, type SendContext, type SessionDirectory, type XmlElement } from '@service/plugin-api';
import type { RosterApi } from '@service/mod_roster/api';
import { activeListOf } from './active-list.js';
import { decide, relationIn } from './decide.js';
import type { Action, PrivacyList } from './model.js';
import { inboundKind, isNotification, outboundKind, type Kind } from './stanza-kind.js';
import type { PrivacyStore } from './store.js';

/** A delivery to an account under way: the stanza the sessions' lists refused, and which sessions did. */
interface FanOut {
  readonly ctx: DeliverContext;
  refused?: XmlElement;
  readonly refusedBy: Set<C2SSession>;
}

export class PrivacyEnforcement {
  /** Stanzas refused outside a delivery, already answered once (never answer the same stanza twice). */
  readonly #refused = new WeakSet<XmlElement>();
  /** Deliveries under way, per bare JID of the account (several may interleave while they await). */
  readonly #fanOuts = new Map<string, Set<FanOut>>();

  constructor(
    private readonly store: PrivacyStore,
    private readonly sessions: SessionDirectory,
    private readonly router: RouterApi,
    /** mod_roster's service while it runs (read at each use: it may stop). */
    private readonly roster: () => RosterApi | undefined,
  ) {}

  /**
   * The deliver layer. Its common case (an account without lists, a stanza that is not a broadcast of a
   * local account with lists) calls `next` without an async frame: it is on the path of every stanza.
   */
  onDeliver(ctx: DeliverContext, next: () => Promise<void>): Promise<void> {
    const { stanza, from, to } = ctx;
    // Most accounts have no list: nothing of theirs can refuse the stanza, so no lookup and no fan-out
    // bookkeeping (a group chat message is delivered once per occupant).
    const recipientFree = this.store.withoutLists(to.toBare());
    if (recipientFree && !this.#senderListApplies(stanza, from, to)) return next();
    return this.#deliverChecked(ctx, next, recipientFree);
  }

  async #deliverChecked(ctx: DeliverContext, next: () => Promise<void>, recipientFree: boolean): Promise<void> {
    const { stanza, from, to } = ctx;
    const recipient = to.toBare();
    if (!recipientFree && !isAlwaysAllowed(recipient, from) && !(await this.#reachesActiveList(to))) {
      const list = await this.#defaultList(recipient);
      if (list && (await this.#decide(recipient, list, from, inboundKind(stanza))) === 'deny') return this.#refuseInbound(stanza);
    }
    if (this.#senderListApplies(stanza, from, to)) {
      const list = await this.#listOf(from.toBare(), await this.sessions.get(from.full));
      // Dropped silently: it is the server's broadcast, not something the user sent by hand.
      if (list && (await this.#decide(from.toBare(), list, to, 'presence-out')) === 'deny') return;
    }
    if (recipientFree) return next();
    await this.#fanOut(ctx, next);
  }

  /** A presence broadcast of a local account that may have lists: its own outbound list decides too. */
  #senderListApplies(stanza: XmlElement, from: Jid, to: Jid): boolean {
    return isNotification(stanza) && this.#isLocalAccount(from) && !this.store.withoutLists(from.toBare()) && !isAlwaysAllowed(from.toBare(), to);
  }

  /**
   * Runs the rest of the delivery, recording the sessions that refuse the stanza (onReceive); then answers
   * once if it was refused and no session it was handed to kept it. `delivered` lists the sessions the
   * stanza was handed to, including those whose user_receive dropped it.
   */
  async #fanOut(ctx: DeliverContext, next: () => Promise<void>): Promise<void> {
    const fanOut: FanOut = { ctx, refusedBy: new Set() };
    const account = ctx.to.bare;
    const under = this.#fanOuts.get(account) ?? new Set();
    this.#fanOuts.set(account, under.add(fanOut));
    try {
      await next();
    } finally {
      under.delete(fanOut);
      if (under.size === 0 && this.#fanOuts.get(account) === under) this.#fanOuts.delete(account);
    }
    if (fanOut.refused && ctx.delivered.every((s) => fanOut.refusedBy.has(s))) await this.#refuseInbound(fanOut.refused);
  }

  /** The delivery `stanza` is part of, if it is being delivered to `session`'s account now. */
  #fanOutOf(stanza: XmlElement, session: C2SSession): FanOut | undefined {
    // Identity of the stanza (as layers left it in ctx.stanza): copies and pushes are other elements.
    for (const fanOut of this.#fanOuts.get(session.account.bare) ?? []) if (fanOut.ctx.stanza === stanza) return fanOut;
    return undefined;
  }

  /** The user_receive layer; as onDeliver, a session of an account without lists passes straight through. */
  onReceive(ctx: ReceiveContext, next: () => Promise<void>): Promise<void> {
    if (this.store.withoutLists(ctx.session.account)) return next();
    return this.#receiveChecked(ctx, next);
  }

  async #receiveChecked(ctx: ReceiveContext, next: () => Promise<void>): Promise<void> {
    const { stanza, session } = ctx;
    const from = Jid.tryParse(stanza.attr('from'));
    if (!from || stanza.attr('type') === 'error' || isAlwaysAllowed(session.account, from)) return next();
    const list = await this.#listOf(session.account, session);
    if (list && (await this.#decide(session.account, list, from, inboundKind(stanza))) === 'deny') {
      const fanOut = this.#fanOutOf(stanza, session);
      if (fanOut) {
        // Answered (or not) by #fanOut once every session had its turn.
        fanOut.refused = stanza;
        fanOut.refusedBy.add(session);
        return;
      }
      if (this.#refused.has(stanza)) return;
      this.#refused.add(stanza);
      return this.#refuseInbound(stanza);
    }
    await next();
  }

  /** The user_send layer; as onDeliver, an account without lists passes straight through. */
  onSend(ctx: SendContext, next: () => Promise<void>): Promise<void> {
    const { session, to } = ctx;
    if (!to || this.store.withoutLists(session.account) || isAlwaysAllowed(session.account, to)) return next();
    return this.#sendChecked(ctx, next, to);
  }

  async #sendChecked(ctx: SendContext, next: () => Promise<void>, to: Jid): Promise<void> {
    const { stanza, session } = ctx;
    const list = await this.#listOf(session.account, session);
    if (list && (await this.#decide(session.account, list, to, outboundKind(stanza))) === 'deny') {
      return this.router.bounce(stanza, new StanzaError('not-acceptable', 'your privacy list blocks this'));
    }
    await next();
  }

  /** Whether the stanza may reach a session with an active list (which then decides for itself). */
  async #reachesActiveList(to: Jid): Promise<boolean> {
    const target = to.isBare ? undefined : await this.sessions.get(to.full);
    const candidates = target ? [target] : await this.sessions.byAccount(to.bare);
    return candidates.some((s) => activeListOf(s) !== undefined);
  }

  /** The list that applies to a session (its active list, else the default), or to the account without one. */
  async #listOf(account: Jid, session: C2SSession | undefined): Promise<PrivacyList | undefined> {
    const privacy = await this.store.account(account);
    const active = session && activeListOf(session);
    const name = active ?? privacy.defaultName;
    return name === undefined ? undefined : privacy.lists.get(name);
  }

  async #defaultList(account: Jid): Promise<PrivacyList | undefined> {
    return this.#listOf(account, undefined);
  }

  #decide(owner: Jid, list: PrivacyList, other: Jid, kind: Kind): Promise<Action> {
    return decide(list, other, kind, () => relationIn(this.roster(), owner, other));
  }

  async #refuseInbound(stanza: XmlElement): Promise<void> {
    // bounce() answers neither errors nor IQ results: those are dropped, as §2.13 wants.
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
