/**
 * A map for size-bounded caches whose iteration order is least recently used first, within `moveAfterMs`.
 *
 * The obvious LRU on a Map (delete and set again on every hit) is what a cache hit on every request must not
 * do: V8's ordered hash table rebuilds its backing store as deleted slots pile up, the cache's map lives in
 * the old generation, and each new store it points to is promoted there. With HTTP Basic or a Bearer token
 * on every request that was ~130 bytes promoted per request, an old generation growing by megabytes a second
 * and mark-compacts that took `/api/status` from 70 to 110–150 µs of CPU per request (docs/performance.md).
 * Here a hit moves its entry to the back only when it was last moved `moveAfterMs` ago or more: eviction
 * order stays recency order to that granularity, and a hot entry costs a look-up.
 */
interface Slot<V> {
  value: V;
  movedAt: number;
}

export class RecencyMap<K, V> {
  readonly #slots = new Map<K, Slot<V>>();

  constructor(private readonly moveAfterMs = 1000) {}

  /** The value, counted as used now. */
  get(key: K, now: number): V | undefined {
    const slot = this.#slots.get(key);
    if (!slot) return undefined;
    if (now - slot.movedAt >= this.moveAfterMs) {
      this.#slots.delete(key);
      this.#slots.set(key, slot);
      slot.movedAt = now;
    }
    return slot.value;
  }

  /** The value, not counted as a use. */
  peek(key: K): V | undefined {
    return this.#slots.get(key)?.value;
  }

  /** Stores the value as the most recently used. */
  set(key: K, value: V, now: number): void {
    this.#slots.delete(key);
    this.#slots.set(key, { value, movedAt: now });
  }

  delete(key: K): boolean {
    return this.#slots.delete(key);
  }

  clear(): void {
    this.#slots.clear();
  }

  get size(): number {
    return this.#slots.size;
  }

  /** Drops the least recently used entries until at most `size` are left, telling `evicted` of each. */
  trimTo(size: number, evicted?: (key: K, value: V) => void): void {
    for (const [key, slot] of this.#slots) {
      if (this.#slots.size <= size) break;
      this.#slots.delete(key);
      evicted?.(key, slot.value);
    }
  }
}
