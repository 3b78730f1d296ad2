/**
 * What other modules see of rosters: the items, the subscription states, and the API that
 * `ctx.depends('mod_roster')` returns. Dependents import these as types only.
 */
import type { Jid, StanzaCondition } from '@service/kernel';

/** RFC 6121 §2.1.2.5: whose presence flows where. 'to': the owner receives the contact's; 'from': the contact receives the owner's. */
export type Subscription = 'none' | 'to' | 'from' | 'both';

/**
 * The pending part of a state, as the admin API reports it:
 *   'out'  the owner asked for the contact's presence (ask='subscribe', RFC "Pending Out");
 *   'in'   the contact asked for the owner's presence and has no answer yet (RFC "Pending In");
 *   'none' otherwise.
 * RFC 6121 also has "Pending Out/In" (both requests open, only possible with subscription none); one word
 * cannot say both, so it is reported as 'in' — the request that waits for the owner — while `pendingOut`
 * and `pendingIn` give the exact state.
 */
export type Pending = 'in' | 'out' | 'none';

/** One of RFC 6121's nine subscription states (Appendix A): the subscription and the open requests. */
export interface SubscriptionState {
  readonly subscription: Subscription;
  /** The owner sent a subscription request the contact has not answered (ask='subscribe'). */
  readonly pendingOut: boolean;
  /** The contact sent a subscription request the owner has not answered; it is stored and re-sent at login. */
  readonly pendingIn: boolean;
}

export interface RosterItem extends SubscriptionState {
  /** The contact's bare JID. */
  readonly jid: string;
  /** The name the owner gave the contact (RFC 6121's `name` attribute). */
  readonly nick: string | undefined;
  readonly groups: readonly string[];
  readonly pending: Pending;
  /** The owner pre-approved a subscription request from the contact (RFC 6121 §3.4). */
  readonly approved: boolean;
  /**
   * False for a stored subscription request from someone the owner has not added: it exists only to be
   * answered, clients do not see it in the roster (only returned with `includeRequests`).
   */
  readonly inRoster: boolean;
}

/** An account, as a bare `Jid` or its text (`user@host`, normalized when parsed). */
export type AccountRef = Jid | string;

/** What `setItem` changes; a field left undefined keeps its current value (or the default of a new item). */
export interface RosterItemUpdate {
  readonly jid: Jid | string;
  /** '' removes the name. */
  readonly nick?: string;
  /** [] removes every group. */
  readonly groups?: readonly string[];
  /** Set directly, as an administrator does; answered requests for what it grants are cleared. */
  readonly subscription?: Subscription;
}

export type SubscriptionCause =
  | 'subscribe'
  | 'subscribed'
  | 'unsubscribe'
  | 'unsubscribed'
  /** The owner removed the item (roster set with subscription='remove', or the API with `cancelSubscriptions`). */
  | 'roster_remove'
  /** Set or deleted through the API. */
  | 'admin'
  /** The owner's account was removed. */
  | 'account_removed';

/** A change of a contact's state in an owner's roster. */
export interface SubscriptionChange {
  /** The roster's owner (bare). */
  readonly owner: Jid;
  /** The contact (bare). */
  readonly contact: Jid;
  readonly before: SubscriptionState;
  /** After a removal: subscription none, nothing pending. */
  readonly after: SubscriptionState;
  readonly cause: SubscriptionCause;
  /** Who acted: the owner ('outbound'), the contact ('inbound'), or the API ('admin'). */
  readonly direction: 'outbound' | 'inbound' | 'admin';
}

/** Called after the change is stored, pushed, and the stanza that caused it routed. */
export type SubscriptionListener = (change: SubscriptionChange) => void | Promise<void>;

/** Refusals of the roster API, with the stanza error condition a client would get for the same request. */
export class RosterError extends Error {
  constructor(
    readonly condition: StanzaCondition,
    message: string,
  ) {
    super(message);
    this.name = 'RosterError';
  }
}

/** What `ctx.depends('mod_roster')` returns. Owners must be local accounts. */
export interface RosterApi {
  /** The owner's roster, sorted by JID; `includeRequests` adds stored requests from contacts not in it. */
  getRoster(owner: AccountRef, options?: { includeRequests?: boolean }): Promise<RosterItem[]>;
  /** One item (a stored request from a contact not in the roster too, with `inRoster` false). */
  getItem(owner: AccountRef, contact: Jid | string): Promise<RosterItem | undefined>;
  /** How many items the roster has (stored requests not counted). */
  countItems(owner: AccountRef): Promise<number>;
  /**
   * Adds or changes an item and pushes it to the owner's interested resources; a subscription given here
   * is set without any stanza exchanged (the admin add_rosteritem). Throws `RosterError` for invalid data.
   */
  setItem(owner: AccountRef, update: RosterItemUpdate): Promise<RosterItem>;
  /**
   * Deletes an item and pushes the removal. With `cancelSubscriptions`, the contact is sent unsubscribe
   * and unsubscribed as for a roster remove (RFC 6121 §2.5.2). False when there was no item.
   */
  deleteItem(owner: AccountRef, contact: Jid | string, options?: { cancelSubscriptions?: boolean }): Promise<boolean>;
  /** Contacts that receive the owner's presence (subscription from or both). */
  subscribers(owner: AccountRef): Promise<Jid[]>;
  /** Contacts whose presence the owner receives (subscription to or both). */
  subscriptions(owner: AccountRef): Promise<Jid[]>;
  /** The current roster version (XEP-0237), or undefined when versioning is off. */
  version(owner: AccountRef): Promise<string | undefined>;
  /** Registers a listener of subscription changes; returns its removal. */
  onSubscriptionChange(listener: SubscriptionListener): () => void;
}
