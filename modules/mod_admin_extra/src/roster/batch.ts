/**
 * Roster writes of the admin commands, planned and checked as a whole before any is made, so that a bad
 * item or a roster that would overflow max_roster_size changes nothing: every item's data is checked by
 * mod_roster's own rules, then every roster's size, then the items are written one by one through
 * mod_roster (each pushed to the owner's interested resources, presence following its subscription).
 *
 * A subscription is a relation between two accounts. When the contact is an account of this server, its
 * side follows ("mirror"): the owner's `to` is the contact's `from` and the other way round, so both
 * rosters say the same and presence flows as both say. The contact's name and groups for the owner are
 * left as they are (an item created for it has none).
 */
import { CommandError, type Jid } from '@service/plugin-api';
import { RosterError, type RosterApi, type RosterItem, type Subscription } from '@service/mod_roster/api';
import type { AdminContext } from '../context.js';
import { isLocalAccount } from './accounts.js';

/** One item to write: its full new form (a field left undefined keeps the item's current value). */
export interface ItemWrite {
  readonly owner: Jid;
  readonly contact: Jid;
  readonly nick?: string;
  readonly groups?: readonly string[];
  readonly subscription: Subscription;
}

/** The contact's subscription toward the owner that matches the owner's toward the contact. */
export function mirrorOf(subscription: Subscription): Subscription {
  if (subscription === 'to') return 'from';
  if (subscription === 'from') return 'to';
  return subscription;
}

/**
 * mod_roster's RosterError. The API entry and the running mod_roster import the same file for it (types.js),
 * so there is one class and instanceof holds.
 */
export function isRosterError(err: unknown): err is RosterError {
  return err instanceof RosterError;
}

/** How a refusal of mod_roster reads as a command error; anything else is returned as it is. */
export function rosterFailure(err: unknown, argument?: string, context?: string): unknown {
  if (!isRosterError(err)) return err;
  const message = context ? `${context}: ${err.message}` : err.message;
  // A full roster is the state of the account, not a fault of the argument.
  if (err.condition === 'not-allowed' && /roster is full/.test(err.message)) return new CommandError('conflict', message);
  return new CommandError('bad_argument', message, argument);
}

export class RosterBatch {
  readonly #rosters = new Map<string, Map<string, RosterItem>>();
  readonly #writes = new Map<string, ItemWrite>();

  constructor(
    private readonly ctx: AdminContext,
    readonly roster: RosterApi,
  ) {}

  /**
   * Reads the owner's stored roster once, for a batch that writes many of its items (cheaper than one
   * query per item); without it, items are read one by one. Stored items only: shared contacts (shared
   * roster groups) are not counted by max_roster_size, and their groups must not be copied into the
   * items written here.
   */
  async preload(owner: Jid): Promise<Map<string, RosterItem>> {
    let items = this.#rosters.get(owner.bare);
    if (!items) {
      items = new Map((await this.roster.storedItems(owner)).map((item) => [item.jid, item]));
      this.#rosters.set(owner.bare, items);
    }
    return items;
  }

  /** The owner's stored item for the contact, if it is in the roster. */
  async item(owner: Jid, contact: Jid): Promise<RosterItem | undefined> {
    const loaded = this.#rosters.get(owner.bare);
    if (loaded) return loaded.get(contact.bare);
    return (await this.roster.storedItems(owner, [contact.bare]))[0];
  }

  /**
   * Adds a write after checking its data; throws mod_roster's RosterError (the caller says where the
   * item came from). A later write of the same item replaces an earlier one.
   */
  add(write: ItemWrite): void {
    this.roster.checkItem(write.owner, { jid: write.contact, nick: write.nick, groups: write.groups });
    this.#writes.set(key(write.owner, write.contact), write);
  }

  /**
   * Adds the contact's side of `write` when the contact is a local account and the batch does not already
   * write that side itself: the mirrored subscription; nothing when it would be `none` and the contact
   * has no item for the owner, or when its item already says so.
   */
  async addMirror(write: ItemWrite): Promise<void> {
    if (this.#writes.has(key(write.contact, write.owner))) return;
    if (!(await isLocalAccount(this.ctx, write.contact))) return;
    const subscription = mirrorOf(write.subscription);
    const existing = await this.item(write.contact, write.owner);
    if (existing ? existing.subscription === subscription : subscription === 'none') return;
    this.#writes.set(key(write.contact, write.owner), { owner: write.contact, contact: write.owner, subscription });
  }

  /** Refuses (409) the whole batch when a roster would hold more than max_roster_size items. */
  async checkRoom(): Promise<void> {
    const limit = this.roster.maxRosterSize();
    if (!Number.isFinite(limit)) return;
    const added = new Map<string, { owner: Jid; contacts: Map<string, Jid> }>();
    for (const write of this.#writes.values()) {
      const entry = added.get(write.owner.bare) ?? { owner: write.owner, contacts: new Map<string, Jid>() };
      entry.contacts.set(write.contact.bare, write.contact);
      added.set(write.owner.bare, entry);
    }
    for (const { owner, contacts } of added.values()) {
      const loaded = this.#rosters.get(owner.bare);
      let size = loaded ? loaded.size : await this.roster.storedCount(owner);
      for (const contact of contacts.values()) if (!(await this.item(owner, contact))) size++;
      if (size > limit) {
        throw new CommandError('conflict', `the roster of ${owner.bare} would hold ${size} items; max_roster_size allows ${limit}: nothing was changed`);
      }
    }
  }

  get size(): number {
    return this.#writes.size;
  }

  /**
   * Writes every item, in the order added; mod_roster pushes each and tells mod_presence. An item already
   * as it should be (in a preloaded roster) is not written again, so running a command twice is cheap.
   */
  async apply(progress?: (done: number, total: number) => void): Promise<void> {
    const total = this.#writes.size;
    let done = 0;
    for (const write of this.#writes.values()) {
      if (!this.#unchanged(write)) {
        try {
          await this.roster.setItem(write.owner, { jid: write.contact, nick: write.nick, groups: write.groups, subscription: write.subscription });
        } catch (err) {
          throw rosterFailure(err, undefined, `${write.owner.bare}'s item for ${write.contact.bare}`);
        }
      }
      done++;
      if (progress && (done % 100 === 0 || done === total)) progress(done, total);
    }
  }

  #unchanged(write: ItemWrite): boolean {
    const current = this.#rosters.get(write.owner.bare)?.get(write.contact.bare);
    if (!current || current.subscription !== write.subscription) return false;
    if (write.nick !== undefined && (write.nick || undefined) !== current.nick) return false;
    if (write.groups === undefined) return true;
    const groups = [...new Set(write.groups)].sort();
    return groups.length === current.groups.length && groups.every((g, i) => g === current.groups[i]);
  }
}

function key(owner: Jid, contact: Jid): string {
  return `${owner.bare}\u0000${contact.bare}`;
}
