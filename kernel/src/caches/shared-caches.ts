/**
 * The caches of this node that other nodes' changes must reach (CachesApi): each registers how to drop an
 * entry; a local drop is announced on the `cache_invalidated` hook (a cluster module carries it to the
 * other nodes), and what other nodes announce is applied here without being announced again.
 */
import type { CachesApi } from '@service/plugin-api';
import type { HookBus } from '../hooks/hooks.js';

type Drop = (key?: string) => void;

export class SharedCaches implements CachesApi {
  readonly #caches = new Map<string, Drop[]>();

  constructor(private readonly hooks: HookBus) {}

  async changed(cache: string, key?: string): Promise<void> {
    // Telling other nodes is best effort: the cluster module logs what it cannot send.
    await this.hooks.run('cache_invalidated', cache, key).catch(() => undefined);
  }

  invalidateLocal(cache: string, key?: string): void {
    const targets = cache === '*' ? [...this.#caches.values()].flat() : (this.#caches.get(cache) ?? []);
    for (const drop of targets) drop(cache === '*' ? undefined : key);
  }

  register(cache: string, drop: Drop): () => void {
    this.#caches.set(cache, [...(this.#caches.get(cache) ?? []), drop]);
    return () => this.#caches.set(cache, (this.#caches.get(cache) ?? []).filter((d) => d !== drop));
  }
}
