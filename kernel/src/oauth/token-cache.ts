/**
 * A cache of token look-ups (oauth_use_cache, oauth_cache_size, oauth_cache_life_time, oauth_cache_missed):
 * a bearer call then costs a hash and a map look-up. Entries are keyed by the token's hash. A revocation
 * removes its entry at once; an expiry is checked on every use, cached or not.
 *
 * A caller that keeps a look-up itself (the HTTP authenticator, per connection) takes a mark before it, and
 * `trusts` says later whether the look-up still stands (CacheEpoch: every removal ends every mark).
 */
import { CacheEpoch, type CacheMark } from '../caches/cache-epoch.js';
import { RecencyMap } from '../caches/recency-map.js';

export interface CacheSettings {
  readonly enabled: boolean;
  readonly size: number;
  readonly lifeTimeMs: number;
  /** Also remember that a token does not exist. */
  readonly cacheMissed: boolean;
}

export class TokenCache<T> {
  /** Least recently used first (to the second: see RecencyMap). */
  readonly #entries = new RecencyMap<string, { value: T | undefined; until: number }>();
  /** Advanced by removals and clears: a mark taken before one is no longer trusted. */
  readonly #epoch = new CacheEpoch();

  constructor(private readonly settings: () => CacheSettings) {}

  /** `undefined` when not cached; `{value: undefined}` for a cached miss. */
  get(hash: string, now = Date.now()): { value: T | undefined } | undefined {
    const settings = this.settings();
    if (!settings.enabled) return undefined;
    const entry = this.#entries.get(hash, now);
    if (!entry) return undefined;
    if (entry.until <= now) {
      this.#entries.delete(hash);
      return undefined;
    }
    return { value: entry.value };
  }

  set(hash: string, value: T | undefined, now = Date.now()): void {
    const settings = this.settings();
    if (!settings.enabled || (value === undefined && !settings.cacheMissed)) return;
    this.#entries.set(hash, { value, until: now + settings.lifeTimeMs }, now);
    this.#entries.trimTo(settings.size);
  }

  delete(hash: string): void {
    this.#epoch.advance();
    this.#entries.delete(hash);
  }

  clear(): void {
    this.#epoch.advance();
    this.#entries.clear();
  }

  /** A mark to take before a look-up; undefined when the cache is off (every use must look the token up). */
  mark(now = Date.now()): CacheMark | undefined {
    return this.settings().enabled ? this.#epoch.mark(now) : undefined;
  }

  /** Whether a look-up marked by `mark` still stands: the cache is on, nothing was removed since, the entry lifetime has not passed. */
  trusts(mark: CacheMark, now = Date.now()): boolean {
    const settings = this.settings();
    return settings.enabled && this.#epoch.holds(mark, now, settings.lifeTimeMs);
  }
}
