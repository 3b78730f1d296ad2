/**
 * What other modules see of rosters: the items, the subscription states, and the roster service
 * (RosterApi) they get with `ctx.use(rosterService)`. Consumers import these through the API entry
 * (public-api.ts), as types, and RosterError.
 */
import { type DbKind, type Jid, type StanzaCondition } from '@service/plugin-api';

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
  | 'account_removed'
  /** A shared contact came or went (a provider's contacts changed: mod_shared_roster's groups). */
  | 'shared';

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

/** One stored row as an administrator's scan of every roster sees it (process_rosteritems). */
export interface RosterEntry extends SubscriptionState {
  /** The roster's owner, bare (`user@host`). */
  readonly owner: string;
  /** The contact's bare JID. */
  readonly contact: string;
  /** False for a stored subscription request from a contact the owner has not added. */
  readonly inRoster: boolean;
}

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
/** The roster service (`rosterService`), as consumers get it from `ctx.use`. Owners must be local accounts. */
export interface RosterApi {
  /** The store the rows live in (db_type): process_rosteritems' patterns follow ejabberd's backend grammar. */
  readonly dbKind: DbKind;
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
   * Throws the `RosterError` that `setItem` would throw for this update's data (the contact, name and
   * groups), without changing anything: for commands that check a whole batch before writing any of it.
   * The roster's size is not checked here (see `maxRosterSize`).
   */
  checkItem(owner: AccountRef, update: RosterItemUpdate): void;
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
  /**
   * Every stored row of every account (stored requests included), ordered by owner then contact and read
   * from the database in pages, so that a scan of a large server does not hold every row at once.
   * `subscriptions` narrows the scan in the database.
   */
  scan(options?: { subscriptions?: readonly Subscription[] }): AsyncIterable<RosterEntry>;
  /** How many items a roster may hold (max_roster_size); Infinity for no limit. */
  maxRosterSize(): number;
  /**
   * The owner's items as stored here, without shared contacts: what max_roster_size counts and what
   * `setItem` changes. All of them, or only those of `contacts` (bare JIDs) that are in the roster.
   */
  storedItems(owner: AccountRef, contacts?: readonly string[]): Promise<RosterItem[]>;
  /** How many items are stored in the owner's roster (shared contacts and stored requests not counted). */
  storedCount(owner: AccountRef): Promise<number>;
  /** Registers a listener of subscription changes; returns its removal. */
  onSubscriptionChange(listener: SubscriptionListener): () => void;
  /**
   * Lets a module put contacts in rosters without storing them here (see SharedContactsProvider); returns
   * its removal. Every read of this API, roster gets and pushes include them from then on.
   */
  provideSharedContacts(provider: SharedContactsProvider): () => void;
  /**
   * A provider's contacts of `owner` changed: pushes what the owner's interested resources now see of each
   * contact (when it differs from what they saw with `before`), and, unless `presence` is false, tells the
   * subscription listeners, so that presence starts or stops flowing as after a subscription change.
   */
  sharedContactsChanged(owner: AccountRef, changes: readonly SharedContactChange[], options?: { presence?: boolean }): Promise<void>;
}

/** A contact a provider puts in an owner's roster: subscribed both ways, in these groups. */
export interface SharedContact {
  /** Roster groups, sorted; joined to those the owner gave the contact when it is also a stored item. */
  readonly groups: readonly string[];
  /** A name to show when the owner gave none. */
  readonly nick?: string;
}

/**
 * A source of shared contacts (mod_shared_roster). Called on roster gets, pushes, presence broadcasts and
 * probes, and on subscription stanzas: both methods must be cheap, and agree with each other.
 */
export interface SharedContactsProvider {
  /** Every shared contact of `owner` (bare), by the contact's bare JID. */
  contactsOf(owner: Jid): Promise<ReadonlyMap<string, SharedContact>>;
  /** One shared contact of `owner`, by bare JID; undefined when it is not one. */
  contactOf(owner: Jid, contact: string): Promise<SharedContact | undefined>;
}

/** One contact whose sharing changed, with what the provider gave for it before (undefined: not shared). */
export interface SharedContactChange {
  /** Bare JID. */
  readonly contact: string;
  readonly before: SharedContact | undefined;
}
