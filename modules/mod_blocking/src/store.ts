/**
 * Blocklists in SQL, with a cache in front: every stanza delivered to an account consults its list, so it
 * is read once and kept (per process) until changed here, on another node of a cluster (a shared cache), or
 * `clear_cache`. Writes of one account run one at a time, which keeps its JIDs unique without a unique
 * index (see migrations.ts).
 */
import { KeyedLock, insertRows, type CachesApi, type Knex } from '@service/plugin-api';
import type { Jid } from '@service/plugin-api';
import { BLOCKLIST_TABLE } from './migrations.js';

/** Accounts kept in the cache; past it the cache starts over (cheap, and bounded). */
const CACHE_LIMIT = 10_000;

/** The blocklists' name among the shared caches: a JID blocked on one node is blocked on every node. */
export const BLOCKLIST_CACHE = 'blocklists';

/** A cached blocklist: the read under way or done, and once done its value (for `peek`). */
interface CacheEntry {
  readonly promise: Promise<ReadonlySet<string>>;
  value?: ReadonlySet<string>;
}

export class BlocklistStore {
  readonly #cache = new Map<string, CacheEntry>();
  /** Writes of one account run one at a time. */
  readonly #writes = new KeyedLock();
  /** Leaves the shared caches (when the module stops). */
  readonly leave: () => void;

  constructor(
    private readonly db: () => Knex,
    private readonly caches: CachesApi,
  ) {
    this.leave = caches.register(BLOCKLIST_CACHE, (bare) => (bare === undefined ? this.#cache.clear() : this.#cache.delete(bare)));
  }

  /** The account's blocked JIDs (normalized text). */
  list(account: Jid): Promise<ReadonlySet<string>> {
    const bare = account.bare;
    let entry = this.#cache.get(bare);
    if (!entry) {
      if (this.#cache.size >= CACHE_LIMIT) this.#cache.clear();
      const loading: CacheEntry = { promise: this.#load(account) };
      this.#cache.set(bare, loading);
      loading.promise.then(
        (value) => {
          loading.value = value;
        },
        // A failed read is not remembered.
        () => {
          if (this.#cache.get(bare) === loading) this.#cache.delete(bare);
        },
      );
      entry = loading;
    }
    return entry.promise;
  }

  /**
   * The account's blocked JIDs when they are cached and read, without waiting; undefined otherwise (ask
   * `list`). Every stanza delivered consults a blocklist: most find it here.
   */
  peek(account: Jid): ReadonlySet<string> | undefined {
    return this.#cache.get(account.bare)?.value;
  }

  /** Adds JIDs; resolves with those that were not blocked yet. */
  add(account: Jid, jids: readonly string[]): Promise<string[]> {
    return this.#writes.run(account.bare, async () => {
      const current = await this.list(account);
      const added = [...new Set(jids)].filter((jid) => !current.has(jid));
      if (added.length) {
        const now = Date.now();
        // A <block/> may name any number of JIDs.
        await insertRows(this.db(), BLOCKLIST_TABLE, added.map((jid) => ({ ...keyOf(account), jid, created_at: now })));
        this.#remember(account.bare, new Set([...current, ...added]));
        await this.caches.changed(BLOCKLIST_CACHE, account.bare);
      }
      return added;
    });
  }

  /** Removes JIDs (all of them when `jids` is undefined); resolves with those that were blocked. */
  remove(account: Jid, jids: readonly string[] | undefined): Promise<string[]> {
    return this.#writes.run(account.bare, async () => {
      const current = await this.list(account);
      const removed = jids === undefined ? [...current] : [...new Set(jids)].filter((jid) => current.has(jid));
      if (removed.length) {
        const rows = this.db()(BLOCKLIST_TABLE).where(keyOf(account));
        await (jids === undefined ? rows : rows.whereIn('jid', removed)).delete();
        this.#remember(account.bare, new Set([...current].filter((jid) => !removed.includes(jid))));
        await this.caches.changed(BLOCKLIST_CACHE, account.bare);
      }
      return removed;
    });
  }

  async removeAccount(account: Jid): Promise<void> {
    await this.#writes.run(account.bare, async () => {
      await this.db()(BLOCKLIST_TABLE).where(keyOf(account)).delete();
      this.#cache.delete(account.bare);
      await this.caches.changed(BLOCKLIST_CACHE, account.bare);
    });
  }

  clearCache(): void {
    this.#cache.clear();
  }

  #remember(bare: string, value: ReadonlySet<string>): void {
    this.#cache.set(bare, { promise: Promise.resolve(value), value });
  }

  async #load(account: Jid): Promise<Set<string>> {
    const rows: Array<{ jid: string }> = await this.db()(BLOCKLIST_TABLE).where(keyOf(account)).select('jid');
    return new Set(rows.map((row) => row.jid));
  }

}

function keyOf(account: Jid): { host: string; username: string } {
  return { host: account.host, username: account.user! };
}
