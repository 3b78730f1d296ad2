/**
 * Privacy lists in SQL (see migrations.ts), with a cache in front: delivery consults an account's lists
 * for every stanza, so they are read once and kept (per process) until changed here or `clear_cache`.
 * What the cache holds is replaced, never mutated, so a reader always sees a whole state. Writes of one
 * account run one at a time.
 */
import { KeyedLock, insertRows, retryingTransaction, type CachesApi, type Knex } from '@service/plugin-api';
import { Jid } from '@service/plugin-api';
import { DEFAULTS_TABLE, ITEMS_TABLE } from './migrations.js';
import type { AccountPrivacy, ItemType, PrivacyItem, PrivacyList, StanzaKind } from './model.js';

/** Accounts kept in the cache; past it the cache starts over (cheap, and bounded). */
const CACHE_LIMIT = 10_000;

const KIND_COLUMNS: ReadonlyArray<[StanzaKind, string]> = [
  ['message', 'match_message'],
  ['iq', 'match_iq'],
  ['presence-in', 'match_presence_in'],
  ['presence-out', 'match_presence_out'],
];

interface ItemRow {
  list_name: string;
  position: number | string;
  item_type: string | null;
  item_value: string | null;
  action: string;
  [kindColumn: string]: unknown;
}

/** The privacy cache's name among the shared caches: a list changed on one node applies on every node. */
export const PRIVACY_CACHE = 'privacy_lists';

export class PrivacyStore {
  readonly #cache = new Map<string, Promise<AccountPrivacy>>();
  /**
   * Accounts whose cached state has no list at all (most accounts): delivery skips them without awaiting
   * anything (`withoutLists`). Kept in step with #cache: whatever forgets an entry there forgets it here.
   */
  readonly #listless = new Set<string>();
  /** Writes of one account run one at a time. */
  readonly #writes = new KeyedLock();
  /** Leaves the shared caches (when the module stops). */
  readonly leave: () => void;

  constructor(
    private readonly db: () => Knex,
    private readonly caches: CachesApi,
  ) {
    this.leave = caches.register(PRIVACY_CACHE, (bare) => this.#forget(bare));
  }

  account(account: Jid): Promise<AccountPrivacy> {
    let cached = this.#cache.get(account.bare);
    if (!cached) {
      if (this.#cache.size >= CACHE_LIMIT) this.#forget(undefined);
      const loading = this.#load(account);
      cached = loading;
      this.#cache.set(account.bare, loading);
      loading.then(
        (state) => this.#settled(account.bare, loading, state),
        // A failed read is not remembered.
        () => this.#forget(account.bare),
      );
    }
    return cached;
  }

  /**
   * True when the account is known (cached) to have no privacy list: no stanza to or from it can be
   * refused by one, and no session of it can have an active list. False when unknown: ask `account`.
   */
  withoutLists(account: Jid): boolean {
    return this.#listless.has(account.bare);
  }

  /** Creates or replaces a list (it has at least one item). */
  saveList(account: Jid, list: PrivacyList): Promise<void> {
    return this.#change(account, async (db, current) => {
      // Delete-then-insert deadlocks now and then on InnoDB under concurrent saves: retried (see retryingTransaction).
      await retryingTransaction(db, async (trx) => {
        await trx(ITEMS_TABLE).where({ ...keyOf(account), list_name: list.name }).delete();
        // A list may have any number of items.
        await insertRows(trx, ITEMS_TABLE, list.items.map((item) => rowOf(account, list.name, item)));
      });
      return { ...current, lists: new Map([...current.lists, [list.name, list]]) };
    });
  }

  deleteList(account: Jid, name: string): Promise<void> {
    return this.#change(account, async (db, current) => {
      await db(ITEMS_TABLE).where({ ...keyOf(account), list_name: name }).delete();
      const lists = new Map(current.lists);
      lists.delete(name);
      return { ...current, lists };
    });
  }

  /** Sets (a name) or declines (undefined) the default list. */
  setDefault(account: Jid, name: string | undefined): Promise<void> {
    return this.#change(account, async (db, current) => {
      await db(DEFAULTS_TABLE).where(keyOf(account)).delete();
      if (name !== undefined) await db(DEFAULTS_TABLE).insert({ ...keyOf(account), list_name: name });
      return { ...current, defaultName: name };
    });
  }

  async removeAccount(account: Jid): Promise<void> {
    await this.#writes.run(account.bare, async () => {
      const db = this.db();
      await db(ITEMS_TABLE).where(keyOf(account)).delete();
      await db(DEFAULTS_TABLE).where(keyOf(account)).delete();
      this.#forget(account.bare);
      await this.caches.changed(PRIVACY_CACHE, account.bare);
    });
  }

  clearCache(): void {
    this.#forget(undefined);
  }

  /** Runs a write after the account's previous ones and caches the state it returns. */
  #change(account: Jid, write: (db: Knex, current: AccountPrivacy) => Promise<AccountPrivacy>): Promise<void> {
    return this.#writes.run(account.bare, async () => {
      const current = await this.account(account);
      try {
        const state = await write(this.db(), current);
        const written = Promise.resolve(state);
        this.#cache.set(account.bare, written);
        this.#settled(account.bare, written, state);
      } catch (err) {
        // The database may or may not have changed: read it again next time.
        this.#forget(account.bare);
        throw err;
      } finally {
        await this.caches.changed(PRIVACY_CACHE, account.bare);
      }
    });
  }

  /** A cached state is known: remembered as list-less when it is (and still the cached one). */
  #settled(bare: string, promise: Promise<AccountPrivacy>, state: AccountPrivacy): void {
    if (this.#cache.get(bare) !== promise) return;
    if (state.lists.size === 0) this.#listless.add(bare);
    else this.#listless.delete(bare);
  }

  /** Forgets one account's cached state, or every account's. */
  #forget(bare: string | undefined): void {
    if (bare === undefined) {
      this.#cache.clear();
      this.#listless.clear();
    } else {
      this.#cache.delete(bare);
      this.#listless.delete(bare);
    }
  }

  async #load(account: Jid): Promise<AccountPrivacy> {
    const db = this.db();
    const rows: ItemRow[] = await db(ITEMS_TABLE).where(keyOf(account)).orderBy(['list_name', 'position']);
    const defaults: Array<{ list_name: string }> = await db(DEFAULTS_TABLE).where(keyOf(account)).select('list_name');
    const items = new Map<string, PrivacyItem[]>();
    for (const row of rows) {
      const list = items.get(row.list_name) ?? [];
      list.push(itemOf(row));
      items.set(row.list_name, list);
    }
    const lists = new Map([...items].map(([name, listItems]): [string, PrivacyList] => [name, { name, items: listItems.sort((a, b) => a.order - b.order) }]));
    return { lists, defaultName: defaults[0]?.list_name };
  }

}

function keyOf(account: Jid): { host: string; username: string } {
  return { host: account.host, username: account.user! };
}

function rowOf(account: Jid, listName: string, item: PrivacyItem): Record<string, unknown> {
  const row: Record<string, unknown> = {
    ...keyOf(account),
    list_name: listName,
    position: item.order,
    item_type: item.type ?? null,
    item_value: item.value ?? null,
    action: item.action,
  };
  for (const [kind, column] of KIND_COLUMNS) row[column] = item.kinds.includes(kind);
  return row;
}

function itemOf(row: ItemRow): PrivacyItem {
  const type = (row.item_type ?? undefined) as ItemType | undefined;
  const value = row.item_value ?? undefined;
  const kinds = KIND_COLUMNS.filter(([, column]) => bool(row[column])).map(([kind]) => kind);
  const jid = type === 'jid' && value !== undefined ? Jid.tryParse(value) : undefined;
  return { type, value, jid, action: row.action === 'allow' ? 'allow' : 'deny', order: Number(row.position), kinds };
}

/** Booleans come back as true/false (PostgreSQL) or 1/0 (SQLite, MariaDB). */
function bool(value: unknown): boolean {
  return value === true || value === 1 || value === '1';
}
