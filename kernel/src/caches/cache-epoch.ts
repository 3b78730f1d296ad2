/**
 * How a cache tells a caller that keeps an answer of its own (the HTTP authenticator, per connection) whether
 * that answer still stands as one of its entries would. The cache advances its epoch on every invalidation;
 * the caller takes a mark before the look-up, and the mark holds while the epoch has not moved and the entry
 * lifetime has not passed. Any invalidation ends every mark: invalidations (a password change, a revocation)
 * are rare, and telling them apart per key would cost the hashing the caller meant to save.
 */
export interface CacheMark {
  readonly epoch: number;
  readonly at: number;
}

export class CacheEpoch {
  #value = 0;

  /** The current epoch, for a cache's own "was anything invalidated since" checks. */
  get value(): number {
    return this.#value;
  }

  /** Something cached was invalidated: every mark taken before ends. */
  advance(): void {
    this.#value++;
  }

  mark(now: number): CacheMark {
    return { epoch: this.#value, at: now };
  }

  /** Whether `mark` still holds at `now` for entries that live `lifeTimeMs`. */
  holds(mark: CacheMark, now: number, lifeTimeMs: number): boolean {
    return mark.epoch === this.#value && now - mark.at < lifeTimeMs;
  }
}
