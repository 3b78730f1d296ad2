/**
 * Presence subscriptions (RFC 6121 §3): subscription stanzas a local client sends (user_send) and those
 * arriving for a local account (deliver) move the contact's state per Appendix A; stored requests are
 * re-sent when the account comes online (§3.1.3).
 */
import {
  errorReply,
  parseElement,
  x,
  type C2SSession,
  type DeliverContext,
  type Jid,
  type ServerServices,
  type Middleware,
  type RouterApi,
  type SendContext,
  type XmlElement,
} from '@service/plugin-api';
import type { ChangeOutcome, Roster } from './roster.js';
import { StanzaError } from '@service/plugin-api';
import { NO_SUBSCRIPTION, SUBSCRIPTION_TYPES, inbound, outbound, sameFlags, type SubscriptionType } from './state.js';
import type { StoredItem } from './store.js';
import { RosterError } from './types.js';
import { checkContact } from './validation.js';

function subscriptionType(stanza: XmlElement): SubscriptionType | undefined {
  const type = stanza.attr('type');
  return stanza.name === 'presence' && type !== undefined && SUBSCRIPTION_TYPES.has(type) ? (type as SubscriptionType) : undefined;
}

/** user_send: the owner subscribes, approves, unsubscribes or denies. */
export function outboundSubscriptions(roster: Roster, router: RouterApi): Middleware<SendContext> {
  // Not async itself: every stanza a client sends crosses this layer, and few are subscription stanzas.
  return (ctx, next) => {
    const type = subscriptionType(ctx.stanza);
    return type && ctx.to ? handle(ctx, next, type, ctx.to) : next();
  };
  async function handle(ctx: SendContext, next: () => Promise<void>, type: SubscriptionType, to: Jid): Promise<void> {
    const owner = ctx.session.account;
    // Every account is implicitly subscribed to itself: nothing to ask, nothing to route.
    if (to.bare === owner.bare) return;
    if (await roster.shared.one(owner, to.bare)) {
      // A shared contact is subscribed both ways by its group: the stanza changes nothing here (as in
      // ejabberd's mod_shared_roster) but still goes out, for a contact whose groups do not show the owner.
      ctx.stanza.setAttr('from', owner.bare);
      ctx.stanza.setAttr('to', to.bare);
      return next();
    }
    const applied = await applyOutbound(roster, owner, to.toBare(), type).catch(async (err: unknown) => {
      if (!(err instanceof RosterError)) throw err;
      await router.deliverToSession(ctx.session, errorReply(ctx.stanza, new StanzaError(err.condition, err.message)));
      return undefined;
    });
    if (!applied) return;
    const { contact, outcome } = applied;
    // RFC 6121 §3.1.2 and following: subscription stanzas leave from the bare JID, for the bare JID.
    ctx.stanza.setAttr('from', owner.bare);
    ctx.stanza.setAttr('to', contact.bare);
    if (outcome.result) await next();
    await roster.notify(owner, contact, outcome.before, outcome.after, type, 'outbound');
  }
}

/** The owner's side of an outbound subscription stanza; the outcome's result says whether to route it. */
async function applyOutbound(roster: Roster, owner: Jid, to: Jid, type: SubscriptionType): Promise<{ contact: Jid; outcome: ChangeOutcome<boolean> }> {
  const contact = checkContact(owner, to);
  const outcome = await roster.change(owner, contact.bare, async (current, trx) => {
    const flags = current?.flags ?? NO_SUBSCRIPTION;
    const { next, route } = outbound(type, flags);
    // Asking for, granting or pre-approving a subscription puts the contact in the roster (§3.1.2, §3.1.5, §3.4).
    const joins = (type === 'subscribe' || type === 'subscribed') && !current?.inRoster;
    if (sameFlags(flags, next) && !joins) return { next: undefined, result: route };
    if (joins) await roster.ensureRoom(trx, owner, current);
    return { next: withFlags(contact.bare, current, next, joins), result: route };
  });
  return { contact, outcome };
}

/** deliver: a contact's subscription stanza for a local account. */
export function inboundSubscriptions(roster: Roster, accounts: ServerServices['accounts']): Middleware<DeliverContext> {
  // Not async itself: every stanza delivered crosses this layer, and few are subscription stanzas.
  return (ctx, next) => {
    const type = subscriptionType(ctx.stanza);
    return type ? handle(ctx, next, type) : next();
  };
  async function handle(ctx: DeliverContext, next: () => Promise<void>, type: SubscriptionType): Promise<void> {
    const owner = ctx.to.toBare();
    const contact = ctx.from.toBare();
    if (owner.bare === contact.bare || owner.user === undefined) return;
    if (!(await accounts.exists(owner.user, owner.host))) {
      // §3.1.3: a request for an account that does not exist is answered as denied.
      if (type === 'subscribe') await roster.sendSubscription('unsubscribed', owner, contact);
      return;
    }
    if (await roster.shared.one(owner, contact.bare)) {
      // The owner shares presence with a shared contact already: a request is approved at once, the rest
      // changes nothing, and the owner's clients, which show the contact subscribed both ways, see none of it.
      if (type === 'subscribe') await roster.sendSubscription('subscribed', owner, contact);
      return;
    }
    try {
      checkContact(owner, contact);
    } catch {
      // Not something a roster can hold (too long): there is no state to change.
      return;
    }
    const stored = ctx.stanza.clone().setAttr('from', contact.bare).setAttr('to', owner.bare);
    const outcome = await roster.change(owner, contact.bare, (current) => {
      const flags = current?.flags ?? NO_SUBSCRIPTION;
      const result = inbound(type, flags);
      if (sameFlags(flags, result.next)) return { next: undefined, result };
      const item = withFlags(contact.bare, current, result.next, false);
      return { next: type === 'subscribe' && result.next.pendingIn ? { ...item, request: stored.toString() } : item, result };
    });
    if (outcome.result.autoApprove) await roster.sendSubscription('subscribed', owner, contact);
    if (outcome.result.deliver) {
      ctx.stanza.setAttr('from', contact.bare);
      await next();
    }
    await roster.notify(owner, contact, outcome.before, outcome.after, type, 'inbound');
  }
}

/** The item with new flags; the stored request goes once nothing is pending in. */
function withFlags(contact: string, current: StoredItem | undefined, flags: StoredItem['flags'], joinsRoster: boolean): StoredItem {
  return {
    contact,
    nick: current?.nick,
    groups: current?.groups ?? [],
    flags,
    inRoster: (current?.inRoster ?? false) || joinsRoster,
    request: flags.pendingIn ? current?.request : undefined,
  };
}

/** c2s_initial_presence: requests still waiting for an answer go to the session that just came online. */
export async function resendPendingRequests(roster: Roster, router: RouterApi, session: C2SSession): Promise<void> {
  for (const item of await roster.store.pendingRequests(session.account)) {
    // A request from a contact now shared both ways waits, unseen, until the sharing ends.
    if (await roster.shared.one(session.account, item.contact)) continue;
    await router.deliverToSession(session, storedRequest(item, session.account));
  }
}

function storedRequest(item: StoredItem, owner: Jid): XmlElement {
  if (item.request) {
    try {
      return parseElement(item.request);
    } catch {
      // Fall back to a plain request below.
    }
  }
  return x('presence', { type: 'subscribe', from: item.contact, to: owner.bare });
}
