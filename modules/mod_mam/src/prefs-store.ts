/**
 * Each account's archiving preferences (XEP-0313 §6) in SQL: the default and the always/never lists. An
 * account without a row follows the module's `default` option. Archiving reads them for every message, so
 * they are read once and kept (a shared cache: a change on one worker or node is dropped on every one).
 */
import type { AccountKey, CachesApi, ModuleContext } from '@service/plugin-api';
import { MAM_PREFS_TABLE } from './migrations.js';

type Db = ModuleContext['db'];

export type DefaultMode = 'always' | 'roster' | 'never';
export const DEFAULT_MODES: readonly DefaultMode[] = ['always', 'roster', 'never'];

export interface Prefs {
  readonly default: DefaultMode;
  /** JIDs (bare or full, as the client gave them, prepared) always / never archived. */
  readonly always: readonly string[];
  readonly never: readonly string[];
}

/** The shared cache's name (CachesApi). */
const PREFS_CACHE = 'mam_prefs';
/** Accounts kept in the cache; past it the cache starts over (cheap, and bounded). */
const CACHE_LIMIT = 10_000;

export class PrefsStore {
  readonly #cache = new Map<string, Promise<Prefs | undefined>>();
  /** Leaves the shared caches (when the module stops). */
  readonly leave: () => void;

  constructor(
    private readonly db: Db,
    private readonly caches: CachesApi,
  ) {
    this.leave = caches.register(PREFS_CACHE, (key) => (key === undefined ? this.#cache.clear() : this.#cache.delete(key)));
  }

  /** The stored preferences, or undefined when the account never set any. */
  get(owner: AccountKey): Promise<Prefs | undefined> {
    const key = `${owner.user}@${owner.host}`;
    let cached = this.#cache.get(key);
    if (!cached) {
      if (this.#cache.size >= CACHE_LIMIT) this.#cache.clear();
      cached = this.#read(owner);
      this.#cache.set(key, cached);
      // A failed read is not remembered.
      cached.catch(() => this.#cache.delete(key));
    }
    return cached;
  }

  async #read(owner: AccountKey): Promise<Prefs | undefined> {
    const row: { default_mode: string; always_jids: string; never_jids: string } | undefined = await this.db(MAM_PREFS_TABLE)
      .where({ host: owner.host, username: owner.user })
      .first('default_mode', 'always_jids', 'never_jids');
    if (!row) return undefined;
    return {
      default: DEFAULT_MODES.includes(row.default_mode as DefaultMode) ? (row.default_mode as DefaultMode) : 'always',
      always: jsonList(row.always_jids),
      never: jsonList(row.never_jids),
    };
  }

  async set(owner: AccountKey, prefs: Prefs): Promise<void> {
    await this.db(MAM_PREFS_TABLE)
      .insert({ host: owner.host, username: owner.user, default_mode: prefs.default, always_jids: JSON.stringify(prefs.always), never_jids: JSON.stringify(prefs.never) })
      .onConflict(['host', 'username'])
      .merge();
    await this.#forget(owner);
  }

  async delete(owner: AccountKey): Promise<number> {
    const deleted = await this.db(MAM_PREFS_TABLE).where({ host: owner.host, username: owner.user }).delete();
    await this.#forget(owner);
    return deleted;
  }

  async #forget(owner: AccountKey): Promise<void> {
    const key = `${owner.user}@${owner.host}`;
    this.#cache.delete(key);
    await this.caches.changed(PREFS_CACHE, key);
  }
}

function jsonList(text: string): string[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}
