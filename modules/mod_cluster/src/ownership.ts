/**
 * Which node owns a key (NodesApi.owner): `own:<key>` in Redis names the node, and `owned:<node>` lists a
 * node's keys so that they can be forgotten when it dies. A key nobody owns, or whose owner is dead, is
 * taken with a compare-and-set, so that of several nodes asking at once exactly one wins and the others
 * learn its name. Answers are cached here: an owner stays the owner until it dies (this node's membership
 * view says so without Redis) or releases the key (released keys are published as invalidations of the
 * `cluster.owners` cache, so every node's copy drops them).
 */
import type { Redis } from 'ioredis';
import type { CachesApi } from '@service/plugin-api';
import type { ClusterKeys } from './keys.js';

/** The cache name released keys are published under (CachesApi). */
export const OWNERS_CACHE = 'cluster.owners';

/**
 * Takes KEYS[1] for ARGV[1] when it still holds ARGV[2] ('' = nobody); answers who owns it then.
 * KEYS: own:<key>, owned:<node>; ARGV: node, expected owner, the key.
 */
const TAKE = `
local current = redis.call('GET', KEYS[1])
if (current == false and ARGV[2] == '') or current == ARGV[2] then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('SADD', KEYS[2], ARGV[3])
  return ARGV[1]
end
return current`;

/** Drops KEYS[1] if ARGV[1] owns it. KEYS: own:<key>, owned:<node>; ARGV: node, the key. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('SREM', KEYS[2], ARGV[2])
return 1`;

export class Ownership {
  readonly #known = new Map<string, string>();
  readonly #leave: () => void;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
    private readonly node: string,
    private readonly isLive: (node: string) => boolean,
    caches: CachesApi,
    private readonly published: (key: string) => Promise<void>,
  ) {
    this.#leave = caches.register(OWNERS_CACHE, (key) => (key === undefined ? this.#known.clear() : this.#known.delete(key)));
  }

  async owner(key: string): Promise<string> {
    const known = this.#known.get(key);
    if (known !== undefined && (known === this.node || this.isLive(known))) return known;
    let current = (await this.redis.get(this.keys.owner(key))) ?? '';
    // Three rounds: a node that won a race may die before this one sees it alive.
    for (let round = 0; round < 3; round++) {
      if (current === this.node || (current !== '' && this.isLive(current))) break;
      current = String(await this.redis.eval(TAKE, 2, this.keys.owner(key), this.keys.owned(this.node), this.node, current, key));
    }
    this.#known.set(key, current);
    return current;
  }

  async release(key: string): Promise<void> {
    this.#known.delete(key);
    await this.redis.eval(RELEASE, 2, this.keys.owner(key), this.keys.owned(this.node), this.node, key);
    await this.published(key);
  }

  /** A node died or left: its keys are nobody's (the next node to ask takes each). */
  async forgetNode(node: string): Promise<void> {
    const owned = this.keys.owned(node);
    for (;;) {
      const batch = await this.redis.spop(owned, 500);
      if (!batch.length) break;
      for (const key of batch) await this.redis.eval(RELEASE, 2, this.keys.owner(key), owned, node, key);
    }
    for (const [key, owner] of this.#known) if (owner === node) this.#known.delete(key);
  }

  stop(): void {
    this.#leave();
    this.#known.clear();
  }
}
