/**
 * Cluster membership over Redis: a node joins by writing its record and keeps an `alive` key whose TTL its
 * heartbeat refreshes; a node whose key expired is dead. Every node watches the others on each heartbeat,
 * and the first to claim a dead node (SET NX) cleans up after it, once. The shared secret (the cookie) is
 * checked at join: the first node stores its sha256, and a node with another cookie is refused.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '@service/plugin-api';
import type { ClusterKeys } from './keys.js';

export interface NodeRecord {
  readonly name: string;
  /** When the node joined (ms since the epoch). */
  readonly started: number;
  readonly version: string;
}

export interface Member extends NodeRecord {
  readonly alive: boolean;
}

export class CookieMismatch extends Error {}

export class Membership {
  #timer?: NodeJS.Timeout;
  #beating = false;
  /** The nodes whose heartbeat was current at the last look (refreshed by each heartbeat). */
  #live: ReadonlySet<string> = new Set();

  constructor(
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
    readonly node: NodeRecord,
    private readonly timing: { heartbeatMs: number; timeoutMs: number },
    private readonly onDead: (node: string) => Promise<void>,
    /** This node was taken for dead (Redis was out of reach longer than the timeout) and is back: re-register. */
    private readonly onRejoin: () => Promise<void>,
    private readonly logger: Logger,
    /** A node this one saw alive is not any more (every node sees it; onDead runs on one). */
    private readonly onUnseen: (node: string) => void = () => {},
  ) {}

  /** Checks the cookie, registers this node and starts its heartbeat. */
  async join(cookie: string): Promise<void> {
    const hash = createHash('sha256').update(cookie).digest('hex');
    await this.redis.set(this.keys.cookie, hash, 'NX');
    const stored = await this.redis.get(this.keys.cookie);
    if (!stored || stored.length !== hash.length || !timingSafeEqual(Buffer.from(stored), Buffer.from(hash))) {
      throw new CookieMismatch('the cookie differs from the one of the cluster this Redis holds: this node may not join it');
    }
    await this.redis.multi().hset(this.keys.nodes, this.node.name, JSON.stringify(this.node)).set(this.keys.alive(this.node.name), '1', 'PX', this.timing.timeoutMs).exec();
    this.#see(await this.members());
    this.#timer = setInterval(() => void this.#heartbeat(), this.timing.heartbeatMs);
    this.#timer.unref();
    this.logger.notice({ node: this.node.name }, 'node %s joined the cluster', this.node.name);
  }

  /** Leaves: this node's record and heartbeat go (its sessions are the directory's business). */
  async leave(): Promise<void> {
    this.stop();
    await this.redis.multi().hdel(this.keys.nodes, this.node.name).del(this.keys.alive(this.node.name)).exec();
    const master = await this.redis.get(this.keys.master);
    if (master === this.node.name) await this.redis.del(this.keys.master);
    this.logger.notice({ node: this.node.name }, 'node %s left the cluster', this.node.name);
  }

  /** Drops another node's record (leave_cluster of a dead node). */
  async forget(node: string): Promise<void> {
    await this.redis.multi().hdel(this.keys.nodes, node).del(this.keys.alive(node)).exec();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Whether a node's heartbeat was current at the last heartbeat of this one (no Redis round trip). */
  isLive(node: string): boolean {
    return this.#live.has(node);
  }

  #see(members: readonly Member[]): void {
    const before = this.#live;
    this.#live = new Set(members.filter((m) => m.alive).map((m) => m.name));
    for (const node of before) if (!this.#live.has(node)) this.onUnseen(node);
  }

  /** The nodes whose heartbeat was current at the last look, sorted. */
  live(): string[] {
    return [...this.#live].sort();
  }

  async members(): Promise<Member[]> {
    const records = Object.values(await this.redis.hgetall(this.keys.nodes)).map((json) => JSON.parse(json) as NodeRecord);
    if (!records.length) return [];
    const alive = await this.redis.mget(...records.map((r) => this.keys.alive(r.name)));
    return records.map((r, i) => ({ ...r, alive: alive[i] !== null })).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The master: the one set with set_master while it is alive, else the longest-running live node. */
  async master(): Promise<string | undefined> {
    const members = (await this.members()).filter((m) => m.alive);
    const chosen = await this.redis.get(this.keys.master);
    if (chosen && members.some((m) => m.name === chosen)) return chosen;
    return [...members].sort((a, b) => a.started - b.started || a.name.localeCompare(b.name))[0]?.name;
  }

  async setMaster(name: string): Promise<void> {
    await this.redis.set(this.keys.master, name);
  }

  async #heartbeat(): Promise<void> {
    if (this.#beating) return;
    this.#beating = true;
    try {
      await this.redis.set(this.keys.alive(this.node.name), '1', 'PX', this.timing.timeoutMs);
      const members = await this.members();
      this.#see(members);
      if (!members.some((m) => m.name === this.node.name)) {
        this.logger.warn({ node: this.node.name }, 'node %s was taken for dead by the cluster: joining again', this.node.name);
        await this.redis.hset(this.keys.nodes, this.node.name, JSON.stringify(this.node));
        await this.onRejoin();
      }
      for (const member of members) {
        if (member.alive || member.name === this.node.name) continue;
        // One node cleans up after a dead one: whoever claims it first.
        const claimed = await this.redis.set(this.keys.reap(member.name), this.node.name, 'PX', 60_000, 'NX');
        if (claimed !== 'OK') continue;
        this.logger.warn({ node: member.name }, 'node %s stopped answering: it is dead, cleaning up after it', member.name);
        try {
          await this.onDead(member.name);
        } finally {
          await this.redis.hdel(this.keys.nodes, member.name);
        }
      }
    } catch (err) {
      // Redis is out of reach: the last live view stays.
      this.logger.warn({ err: (err as Error).message }, 'cluster heartbeat failed: %s', (err as Error).message);
    } finally {
      this.#beating = false;
    }
  }
}
