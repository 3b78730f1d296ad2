/**
 * Cache invalidations between nodes, over Redis pub/sub (`svc:<cluster>:invalidate`): what a cache of this
 * node drops (the `cache_invalidated` hook), and `clear_cache`, are published; what other nodes publish is
 * dropped here with CachesApi.invalidateLocal. Pub/sub fits: an invalidation matters only to nodes that are
 * up, and a node that was cut off from Redis drops every shared cache when it is back (it may have missed
 * some).
 */
import type { Redis } from 'ioredis';
import type { CachesApi, Logger } from '@service/plugin-api';
import type { ClusterKeys } from './keys.js';

interface Invalidation {
  readonly node: string;
  readonly cache: string;
  readonly key?: string;
}

export class Invalidations {
  #wasConnected = false;

  constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly keys: ClusterKeys,
    private readonly node: string,
    private readonly caches: CachesApi,
    private readonly logger: Logger,
  ) {}

  /** Subscribes on the shared events connection, which is connected already. */
  async start(): Promise<void> {
    this.#wasConnected = true;
    this.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.keys.invalidations) return;
      let message: Invalidation;
      try {
        message = JSON.parse(text) as Invalidation;
      } catch {
        return;
      }
      if (message.node === this.node || typeof message.cache !== 'string') return;
      this.caches.invalidateLocal(message.cache, typeof message.key === 'string' ? message.key : undefined);
    });
    this.subscriber.on('ready', () => {
      // Back after a cut: invalidations sent meanwhile were missed.
      if (this.#wasConnected) {
        this.logger.notice('back in touch with the cluster: dropping every shared cache');
        this.caches.invalidateLocal('*');
      }
    });
    await this.subscriber.subscribe(this.keys.invalidations);
  }

  /** Tells the other nodes that `cache` dropped `key` (every entry when undefined; `*`: every cache). */
  async publish(cache: string, key?: string): Promise<void> {
    const message: Invalidation = { node: this.node, cache, ...(key === undefined ? {} : { key }) };
    try {
      await this.redis.publish(this.keys.invalidations, JSON.stringify(message));
    } catch (err) {
      this.logger.warn({ cache, err: (err as Error).message }, 'could not tell the cluster that cache %s changed: %s', cache, (err as Error).message);
    }
  }

  stop(): void {
    this.subscriber.disconnect();
  }
}
