/**
 * The heart of the module: every change of a roster item goes through `change`, which reads the item,
 * lets the caller decide, writes the result with a new roster version in one transaction, and pushes what
 * the owner's clients see of it. Subscription listeners (mod_presence) are told about state changes here.
 */
import { Jid, x, type Logger, type XmppApi } from '@service/plugin-api';
import type { Knex } from '@service/plugin-api';
import { KeyedLock } from '@service/plugin-api';
import type { RosterPushes } from './pushes.js';
import { itemElement, removedItemElement } from './roster-xml.js';
import { SharedContacts, visibleItem, visibleVersion } from './shared.js';
import { NO_SUBSCRIPTION, publicState, type Flags, type SubscriptionType } from './state.js';
import type { RosterStore, StoredItem } from './store.js';
import { RosterError, type SharedContactChange, type SubscriptionCause, type SubscriptionChange, type SubscriptionListener } from './types.js';

export interface RosterSettings {
  readonly versioning: boolean;
  /** Items a roster may hold; Infinity for no limit. */
  readonly maxRosterSize: number;
}

/**
 * What a caller of `change` decided: `next` is the item to store, `null` to delete it, `undefined` to leave
 * everything as it is; `result` is handed back to the caller.
 */
export interface Decision<R> {
  readonly next: StoredItem | null | undefined;
  readonly result: R;
}

export interface ChangeOutcome<R> {
  readonly before: StoredItem | undefined;
  readonly after: StoredItem | undefined;
  readonly result: R;
}

export type Decide<R> = (current: StoredItem | undefined, trx: Knex.Transaction) => Promise<Decision<R>> | Decision<R>;

export class Roster {
  readonly #locks = new KeyedLock();
  readonly #listeners = new Set<SubscriptionListener>();
  /** Contacts other modules put in rosters (mod_shared_roster); merged into what clients and the API see. */
  readonly shared = new SharedContacts();

  constructor(
    readonly store: RosterStore,
    readonly pushes: RosterPushes,
    private readonly xmpp: XmppApi,
    private readonly logger: Logger,
    private readonly settings: () => RosterSettings,
  ) {}

  get versioning(): boolean {
    return this.settings().versioning;
  }

  /** Items a roster may hold; Infinity for no limit. */
  get maxRosterSize(): number {
    return this.settings().maxRosterSize;
  }

  async change<R>(owner: Jid, contact: string, decide: Decide<R>): Promise<ChangeOutcome<R>> {
    return this.#locks.run(owner.bare, async () => {
      const outcome = await this.store.transaction(async (trx) => {
        const before = await this.store.item(owner, contact, trx);
        const decision = await decide(before, trx);
        if (decision.next === undefined) return { before, after: before, result: decision.result, visible: false, version: undefined };
        // A row outside the roster exists only for a pending request; once answered there is nothing to keep.
        const after = decision.next && (decision.next.inRoster || decision.next.flags.pendingIn) ? decision.next : undefined;
        if (after) await this.store.save(trx, owner, after, before);
        else if (before) await this.store.delete(trx, owner, contact);
        const visible = visibleForm(before) !== visibleForm(after);
        const version = visible && this.versioning ? await this.store.nextVersion(trx, owner) : undefined;
        return { before, after, result: decision.result, visible, version };
      });
      // Pushed under the lock, so that clients see versions in order; a shared contact stays, as its provider says.
      if (outcome.visible) {
        const seen = visibleItem(contact, outcome.after, await this.shared.one(owner, contact));
        const version = outcome.version === undefined ? undefined : visibleVersion(outcome.version, await this.shared.of(owner));
        await this.pushes.push(owner, seen?.inRoster ? itemElement(seen) : removedItemElement(contact), version);
      }
      return { before: outcome.before, after: outcome.after, result: outcome.result };
    });
  }

  /**
   * A provider's shared contacts of `owner` changed: pushes each contact whose visible item moved (under
   * the owner's lock, so pushes stay in order with stored changes), then, with `presence`, tells the
   * listeners, so that presence flows as after a subscription change.
   */
  async sharedChanged(owner: Jid, changes: readonly SharedContactChange[], presence: boolean): Promise<void> {
    const moved = await this.#locks.run(owner.bare, async () => {
      const shared = await this.shared.of(owner);
      const out: Array<{ contact: string; was: StoredItem | undefined; is: StoredItem | undefined }> = [];
      let version: string | undefined;
      for (const { contact, before } of changes) {
        const stored = await this.store.item(owner, contact);
        const was = visibleItem(contact, stored, before);
        const is = visibleItem(contact, stored, shared.get(contact));
        if (visibleForm(was) === visibleForm(is)) continue;
        if (this.versioning) version ??= visibleVersion(await this.store.version(owner), shared);
        await this.pushes.push(owner, is?.inRoster ? itemElement(is) : removedItemElement(contact), version);
        out.push({ contact, was, is });
      }
      return out;
    });
    if (!presence) return;
    for (const { contact, was, is } of moved) {
      const jid = Jid.tryParse(contact);
      if (jid) await this.notify(owner, jid, was, is, 'shared', 'admin');
    }
  }

  /** Refuses a new item when the roster is full (max_roster_size). */
  async ensureRoom(trx: Knex.Transaction, owner: Jid, current: StoredItem | undefined): Promise<void> {
    if (current?.inRoster) return;
    const limit = this.settings().maxRosterSize;
    if (!Number.isFinite(limit)) return;
    if ((await this.store.count(owner, trx)) >= limit) {
      throw new RosterError('not-allowed', `the roster is full: it may hold ${limit} items`);
    }
  }

  /** A subscription stanza the server sends on the owner's behalf, from the owner's bare JID (RFC 6121 §3). */
  async sendSubscription(type: SubscriptionType, from: Jid, to: Jid): Promise<void> {
    await this.xmpp.router.route(x('presence', { type, from: from.bare, to: to.bare }));
  }

  onSubscriptionChange(listener: SubscriptionListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Tells the listeners, when the subscription state moved; a failing listener is logged, not fatal. */
  async notify(owner: Jid, contact: Jid, before: StoredItem | undefined, after: StoredItem | undefined, cause: SubscriptionCause, direction: SubscriptionChange['direction']): Promise<void> {
    const from = flagsOf(before);
    const to = flagsOf(after);
    if (from.to === to.to && from.from === to.from && from.pendingIn === to.pendingIn && from.pendingOut === to.pendingOut) return;
    const change: SubscriptionChange = { owner, contact, before: publicState(from), after: publicState(to), cause, direction };
    for (const listener of [...this.#listeners]) {
      try {
        await listener(change);
      } catch (err) {
        this.logger.error({ err, owner: owner.bare, contact: contact.bare }, 'a subscription listener failed');
      }
    }
  }
}

function flagsOf(item: StoredItem | undefined): Flags {
  return item?.flags ?? NO_SUBSCRIPTION;
}

/** The item as the owner's clients see it, for telling whether a change needs a push and a new version. */
function visibleForm(item: StoredItem | undefined): string | undefined {
  return item?.inRoster ? itemElement(item).toString() : undefined;
}
