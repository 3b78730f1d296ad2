/**
 * Roster rows in SQL (see migrations.ts). Every method that takes an executor runs on it, so that a change
 * and its version bump commit together in one transaction; SQLite has a single connection, so nothing in
 * a transaction may use the pool directly.
 *
 * Presence reads an account's subscriptions at every login (the initial broadcast, the probes, the requests
 * still waiting) and again at logout: `itemRows` keeps the account's rows in memory for that, one query per
 * account instead of four per login. Every write here drops the entry at once and again after its
 * transaction commits (a read between the two could see the old rows), and tells the other workers and
 * nodes through the shared caches, as the blocklists do.
 */
import { insertRows, preparedRead, retryingTransaction, type CachesApi, type Knex } from '@service/plugin-api';
import type { Jid } from '@service/plugin-api';
import { GROUPS_TABLE, ITEMS_TABLE, VERSIONS_TABLE } from './migrations.js';
import { flagsOf, subscriptionOf, type Flags } from './state.js';
import type { Subscription } from './types.js';

export type Executor = Knex | Knex.Transaction;

/** Where a scan of every roster stands: the last row read. */
export interface ScanKey {
  readonly host: string;
  readonly username: string;
  readonly jid: string;
}

/** A row of roster_items with its groups, as the module handles it. */
export interface StoredItem {
  /** The contact's bare JID. */
  readonly contact: string;
  readonly nick: string | undefined;
  readonly groups: readonly string[];
  readonly flags: Flags;
  /** False for a stored request from someone not (yet) in the roster. */
  readonly inRoster: boolean;
  /** The pending inbound subscription request, serialized. */
  readonly request: string | undefined;
}

interface ItemRow {
  jid: string;
  nick: string | null;
  subscription: string;
  pending_out: unknown;
  pending_in: unknown;
  approved: unknown;
  in_roster: unknown;
  request: string | null;
}

/** Booleans come back as true/false (PostgreSQL) or 1/0 (SQLite, MariaDB). */
function bool(value: unknown): boolean {
  return value === true || value === 1 || value === '1';
}

function keyOf(owner: Jid): { host: string; username: string } {
  return { host: owner.host, username: owner.user! };
}

function toItem(row: ItemRow, groups: readonly string[]): StoredItem {
  const subscription = (['none', 'to', 'from', 'both'].includes(row.subscription) ? row.subscription : 'none') as Subscription;
  return {
    contact: row.jid,
    nick: row.nick ?? undefined,
    groups,
    flags: { ...flagsOf(subscription), pendingOut: bool(row.pending_out), pendingIn: bool(row.pending_in), approved: bool(row.approved) },
    inRoster: bool(row.in_roster),
    request: row.request ?? undefined,
  };
}

const ITEM_COLUMNS = ['jid', 'nick', 'subscription', 'pending_out', 'pending_in', 'approved', 'in_roster', 'request'];
/** An account's rows, read at each login that finds them out of memory: compiled once (see preparedRead). */
const ACCOUNT_ITEMS = preparedRead<'host' | 'username', ItemRow>((db, p) => db(ITEMS_TABLE).select(ITEM_COLUMNS).where({ host: p('host'), username: p('username') }));

/** Accounts whose rows are kept; past it the cache starts over (cheap, and bounded). */
const CACHE_LIMIT = 10_000;

/** The rosters' name among the shared caches: a subscription changed on one node holds on every node. */
export const ROSTER_CACHE = 'rosters';

export class RosterStore {
  /** Account (bare JID) → its rows, without groups. */
  readonly #rows = new Map<string, Promise<readonly StoredItem[]>>();
  /** The accounts each open transaction wrote, dropped again once it commits. */
  readonly #written = new WeakMap<Executor, Set<string>>();
  /** Leaves the shared caches (when the module stops). */
  readonly leave: () => void;

  constructor(
    private readonly db: Knex,
    private readonly caches: CachesApi,
  ) {
    this.leave = caches.register(ROSTER_CACHE, (bare) => (bare === undefined ? this.#rows.clear() : this.#rows.delete(bare)));
  }

  /**
   * Runs `work` in a transaction, again when the database rolls it back to break a deadlock: concurrent roster
   * sets of different accounts deadlock now and then on MariaDB (deleting an item's groups locks the gap
   * another transaction inserts its groups into). Every caller acts (pushes, presence) after the commit.
   */
  async transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    const written = new Set<string>();
    try {
      return await retryingTransaction(this.db, (trx) => {
        this.#written.set(trx, written);
        return work(trx);
      });
    } finally {
      await this.#dropAll(written);
    }
  }

  /** The account's rows (requests from contacts not in the roster included), from memory when kept. */
  itemRows(owner: Jid): Promise<readonly StoredItem[]> {
    let rows = this.#rows.get(owner.bare);
    if (!rows) {
      if (this.#rows.size >= CACHE_LIMIT) this.#rows.clear();
      rows = this.#loadRows(owner);
      this.#rows.set(owner.bare, rows);
      // A failed read is not remembered.
      rows.catch(() => this.#rows.delete(owner.bare));
    }
    return rows;
  }

  async #loadRows(owner: Jid): Promise<readonly StoredItem[]> {
    const rows = await ACCOUNT_ITEMS.all(this.db, keyOf(owner));
    return rows.map((row) => toItem(row, []));
  }

  /** A write to the owner's rows through `exec`: drop them now, and after the commit when `exec` is a transaction. */
  #wrote(exec: Executor, owner: Jid): Promise<void> {
    const written = this.#written.get(exec);
    if (written) {
      written.add(owner.bare);
      this.#rows.delete(owner.bare);
      return Promise.resolve();
    }
    return this.#dropAll([owner.bare]);
  }

  async #dropAll(accounts: Iterable<string>): Promise<void> {
    const changed: Array<Promise<void>> = [];
    for (const bare of accounts) {
      this.#rows.delete(bare);
      changed.push(this.caches.changed(ROSTER_CACHE, bare));
    }
    await Promise.all(changed);
  }

  async item(owner: Jid, contact: string, exec: Executor = this.db): Promise<StoredItem | undefined> {
    const key = { ...keyOf(owner), jid: contact };
    const row = (await exec(ITEMS_TABLE).first(ITEM_COLUMNS).where(key)) as ItemRow | undefined;
    if (!row) return undefined;
    const groups = (await exec(GROUPS_TABLE).select('group_name').where(key)) as Array<{ group_name: string }>;
    return toItem(row, groups.map((g) => g.group_name).sort());
  }

  /** The owner's items sorted by contact; stored requests from contacts not in the roster only when asked. */
  async items(owner: Jid, includeRequests = false): Promise<StoredItem[]> {
    const query = this.db(ITEMS_TABLE).select(ITEM_COLUMNS).where(keyOf(owner));
    if (!includeRequests) query.andWhere({ in_roster: true });
    const rows = (await query) as ItemRow[];
    if (!rows.length) return [];
    const groupRows = (await this.db(GROUPS_TABLE).select('jid', 'group_name').where(keyOf(owner))) as Array<{ jid: string; group_name: string }>;
    const groups = new Map<string, string[]>();
    for (const { jid, group_name } of groupRows) {
      const list = groups.get(jid);
      if (list) list.push(group_name);
      else groups.set(jid, [group_name]);
    }
    return rows
      .map((row) => toItem(row, (groups.get(row.jid) ?? []).sort()))
      .sort((a, b) => (a.contact < b.contact ? -1 : a.contact > b.contact ? 1 : 0));
  }

  /** Items with a stored inbound request, to re-send at login (without their groups). */
  async pendingRequests(owner: Jid): Promise<StoredItem[]> {
    return (await this.itemRows(owner)).filter((item) => item.flags.pendingIn);
  }

  async count(owner: Jid, exec: Executor = this.db): Promise<number> {
    const [row] = (await exec(ITEMS_TABLE).count({ n: '*' }).where({ ...keyOf(owner), in_roster: true })) as Array<{ n: number | string }>;
    return Number(row?.n ?? 0);
  }

  /** Contacts with the given subscriptions, e.g. ['from', 'both'] for the owner's subscribers. */
  async contactsWith(owner: Jid, subscriptions: readonly Subscription[]): Promise<string[]> {
    const items = await this.itemRows(owner);
    return items.filter((item) => subscriptions.includes(subscriptionOf(item.flags))).map((item) => item.contact);
  }

  /**
   * One page of every account's rows, in (host, username, jid) order, after the row `after` (keyset
   * pagination: each page is an index range scan, whatever the table's size).
   */
  async scanPage(after: ScanKey | undefined, limit: number, subscriptions?: readonly Subscription[]): Promise<Array<ScanKey & { item: StoredItem }>> {
    const query = this.db(ITEMS_TABLE)
      .select(['host', 'username', ...ITEM_COLUMNS])
      .orderBy([{ column: 'host' }, { column: 'username' }, { column: 'jid' }])
      .limit(limit);
    if (subscriptions) query.whereIn('subscription', [...subscriptions]);
    if (after) {
      // (host, username, jid) > (…) spelled out: row-value comparisons are not on every database's index path.
      query.where((q) =>
        q
          .where('host', '>', after.host)
          .orWhere((q2) => q2.where('host', after.host).andWhere('username', '>', after.username))
          .orWhere((q3) => q3.where({ host: after.host, username: after.username }).andWhere('jid', '>', after.jid)),
      );
    }
    const rows = (await query) as Array<ItemRow & { host: string; username: string }>;
    return rows.map((row) => ({ host: row.host, username: row.username, jid: row.jid, item: toItem(row, []) }));
  }

  /** Writes an item; its groups are rewritten only when they differ from `previous`'s. */
  async save(exec: Executor, owner: Jid, item: StoredItem, previous: StoredItem | undefined): Promise<void> {
    const key = { ...keyOf(owner), jid: item.contact };
    await exec(ITEMS_TABLE)
      .insert({
        ...key,
        nick: item.nick ?? null,
        subscription: subscriptionOf(item.flags),
        pending_out: item.flags.pendingOut,
        pending_in: item.flags.pendingIn,
        approved: item.flags.approved,
        in_roster: item.inRoster,
        request: item.request ?? null,
      })
      .onConflict(['host', 'username', 'jid'])
      .merge();
    await this.#wrote(exec, owner);
    const sameGroups = previous !== undefined && previous.groups.length === item.groups.length && previous.groups.every((g, i) => g === item.groups[i]);
    if (sameGroups) return;
    await exec(GROUPS_TABLE).where(key).delete();
    // An item may be in any number of groups.
    await insertRows(exec, GROUPS_TABLE, item.groups.map((group_name) => ({ ...key, group_name })));
  }

  async delete(exec: Executor, owner: Jid, contact: string): Promise<void> {
    const key = { ...keyOf(owner), jid: contact };
    await exec(GROUPS_TABLE).where(key).delete();
    await exec(ITEMS_TABLE).where(key).delete();
    await this.#wrote(exec, owner);
  }

  /** The current roster version: '0' for a roster that never changed (which is then empty). */
  async version(owner: Jid, exec: Executor = this.db): Promise<string> {
    const row = (await exec(VERSIONS_TABLE).first('version').where(keyOf(owner))) as { version: number | string } | undefined;
    return String(row?.version ?? 0);
  }

  /**
   * Moves the version on. Versions are at least the current time in milliseconds, so that an account
   * removed and created again never repeats a version a client may have cached for the old roster.
   */
  async nextVersion(exec: Executor, owner: Jid): Promise<string> {
    const key = keyOf(owner);
    const row = (await exec(VERSIONS_TABLE).first('version').where(key)) as { version: number | string } | undefined;
    const next = Math.max(Number(row?.version ?? 0) + 1, Date.now());
    if (row) await exec(VERSIONS_TABLE).update({ version: next }).where(key);
    else await exec(VERSIONS_TABLE).insert({ ...key, version: next });
    return String(next);
  }

  /** Everything stored for an account (remove_user). */
  async deleteAccount(owner: Jid): Promise<void> {
    await this.transaction(async (trx) => {
      await trx(GROUPS_TABLE).where(keyOf(owner)).delete();
      await trx(ITEMS_TABLE).where(keyOf(owner)).delete();
      await trx(VERSIONS_TABLE).where(keyOf(owner)).delete();
      await this.#wrote(trx, owner);
    });
  }
}
