/**
 * A cache of verified credentials. HTTP Basic authentication checks the password on every request and a
 * SCRAM check costs milliseconds of PBKDF2, so a password that was verified recently is trusted again
 * without the database or the hash.
 *
 * Entries are keyed by a SHA-256 of a per-process random secret, the names as given and the password:
 * the cache never holds a password in recoverable form, and a failed check is never stored. Each entry
 * is filed under the normalized account, so invalidating an account finds every spelling of it.
 */
import { hash, randomBytes } from 'node:crypto';
import { CacheEpoch, type CacheMark } from '../caches/cache-epoch.js';
import { RecencyMap } from '../caches/recency-map.js';

export interface CredentialCacheSettings {
  enabled: boolean;
  /** Most entries kept; the least recently used go first. */
  size: number;
  lifeTimeSeconds: number;
}

interface Entry {
  account: string;
  verifiedAt: number;
}

export class CredentialCache {
  readonly #secret = randomBytes(32).toString('base64');
  readonly #settings: () => CredentialCacheSettings;
  /** Least recently used first (to the second: see RecencyMap). */
  readonly #entries = new RecencyMap<string, Entry>();
  /** The entries of each account, so invalidation is not a scan. */
  readonly #byAccount = new Map<string, Set<string>>();
  readonly #now: () => number;
  readonly #epoch = new CacheEpoch();

  /** `settings` is a getter, so a configuration reload applies to the next lookup; `now` is for tests. */
  constructor(settings: () => CredentialCacheSettings, now: () => number = Date.now) {
    this.#settings = settings;
    this.#now = now;
  }

  /**
   * A token to take before reading stored credentials and hand to `remember` after verifying them: a
   * password change that lands while the check runs makes the token stale, so the old password is not
   * cached after the change.
   */
  epoch(): number {
    return this.#epoch.value;
  }

  /**
   * A mark to take before checking a password: undefined when the cache is off (every check must then go to
   * the stored keys). `trusts` says later whether a success of that check may still be trusted.
   */
  mark(): CacheMark | undefined {
    return this.#settings().enabled ? this.#epoch.mark(this.#now()) : undefined;
  }

  /**
   * Whether a success marked by `mark` may be trusted without checking again, as an entry of this cache would
   * be: the cache is on, nothing was invalidated since (any account's change ends every mark: they are rare),
   * and the entry lifetime has not passed.
   */
  trusts(mark: CacheMark): boolean {
    const settings = this.#settings();
    return settings.enabled && this.#epoch.holds(mark, this.#now(), settings.lifeTimeSeconds * 1000);
  }

  /** True when this exact password was verified for the account within the entry lifetime. */
  isVerified(user: string, host: string, password: string): boolean {
    const settings = this.#settings();
    if (!settings.enabled) return false;
    const key = this.#keyOf(user, host, password);
    const now = this.#now();
    const entry = this.#entries.get(key, now);
    if (!entry) return false;
    if (now - entry.verifiedAt >= settings.lifeTimeSeconds * 1000) {
      this.#delete(key, entry);
      return false;
    }
    return true;
  }

  /**
   * Records a successful check of the names as given, filed under the normalized `account`, unless the
   * cache was invalidated since `epoch` was taken.
   */
  remember(user: string, host: string, password: string, epoch: number, normalized: { user: string; host: string } = { user, host }): void {
    const settings = this.#settings();
    if (!settings.enabled || settings.size < 1 || epoch !== this.#epoch.value) return;
    const key = this.#keyOf(user, host, password);
    const account = accountOf(normalized.user, normalized.host);
    const previous = this.#entries.peek(key);
    if (previous) this.#delete(key, previous);
    const now = this.#now();
    this.#entries.set(key, { account, verifiedAt: now }, now);
    let keys = this.#byAccount.get(account);
    if (!keys) this.#byAccount.set(account, (keys = new Set()));
    keys.add(key);
    // The size may have shrunk on a reload: trim down to it, oldest first.
    this.#entries.trimTo(settings.size, (oldKey, oldEntry) => this.#unfile(oldKey, oldEntry));
  }

  /** Forgets every verified password of the account (password changed, account removed). */
  invalidate(user: string, host: string): void {
    this.#epoch.advance();
    const account = accountOf(user, host);
    for (const key of this.#byAccount.get(account) ?? []) this.#entries.delete(key);
    this.#byAccount.delete(account);
  }

  clear(): void {
    this.#epoch.advance();
    this.#entries.clear();
    this.#byAccount.clear();
  }

  get size(): number {
    return this.#entries.size;
  }

  #keyOf(user: string, host: string, password: string): string {
    // One-shot hash (no Hmac object per request); lengths make the concatenation unambiguous.
    return hash('sha256', `${this.#secret}${user.length}:${user}${host.length}:${host}${password}`, 'base64');
  }

  #delete(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#unfile(key, entry);
  }

  /** Takes the key out of its account's set. */
  #unfile(key: string, entry: Entry): void {
    const keys = this.#byAccount.get(entry.account);
    keys?.delete(key);
    if (keys?.size === 0) this.#byAccount.delete(entry.account);
  }
}

function accountOf(user: string, host: string): string {
  return `${user}@${host}`;
}
