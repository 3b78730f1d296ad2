/**
 * This node's copy of the other nodes' sessions, so that routing reads memory instead of asking Redis for
 * every stanza. Each node announces what it publishes, updates and removes in the directory on a pub/sub
 * channel (`svc:<cluster>:sessions`); the copy applies those announcements, and is loaded again from Redis at
 * start and whenever the subscription comes back after a cut (announcements may have been missed). Redis stays
 * the reference: a full JID the copy does not know is still looked up there (see ClusterDirectory.get).
 */
import type { Redis } from 'ioredis';
import type { Logger } from '@service/plugin-api';
import { nodeSessions } from './directory.js';
import type { ClusterKeys } from './keys.js';
import type { SessionRecord } from './records.js';

export type SessionAnnouncement =
  | { readonly op: 'set'; readonly bare: string; readonly resource: string; readonly record: SessionRecord }
  | { readonly op: 'del'; readonly bare: string; readonly resource: string; readonly id: string }
  | { readonly op: 'node-gone'; readonly node: string };

export class DirectoryMirror {
  /** bare JID → resource → record, for sessions of other nodes only. */
  readonly #accounts = new Map<string, Map<string, SessionRecord>>();
  #wasReady = false;

  constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly keys: ClusterKeys,
    private readonly node: string,
    private readonly logger: Logger,
  ) {}

  /** Subscribes (on the shared events connection, already connected) and loads the other nodes' sessions. */
  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.keys.sessionEvents) return;
      try {
        this.apply(JSON.parse(text) as SessionAnnouncement);
      } catch {
        // A malformed announcement changes nothing.
      }
    });
    this.subscriber.on('ready', () => {
      if (this.#wasReady) void this.reload().catch((err: Error) => this.logger.warn({ err: err.message }, 'reloading the session directory failed: %s', err.message));
    });
    this.#wasReady = true;
    await this.subscriber.subscribe(this.keys.sessionEvents);
    await this.reload();
  }

  /** Tells every node about a change of this node's sessions. */
  async announce(event: SessionAnnouncement): Promise<void> {
    await this.redis.publish(this.keys.sessionEvents, JSON.stringify(event));
  }

  apply(event: SessionAnnouncement): void {
    if (event.op === 'node-gone') {
      for (const [bare, resources] of this.#accounts) {
        for (const [resource, record] of resources) if (record.node === event.node) resources.delete(resource);
        if (!resources.size) this.#accounts.delete(bare);
      }
      return;
    }
    if (event.op === 'set') {
      if (event.record.node === this.node) {
        // This node took the full JID over: another node's copy of it is gone.
        this.#accounts.get(event.bare)?.delete(event.resource);
        return;
      }
      let resources = this.#accounts.get(event.bare);
      if (!resources) this.#accounts.set(event.bare, (resources = new Map()));
      resources.set(event.resource, event.record);
      return;
    }
    const resources = this.#accounts.get(event.bare);
    if (resources?.get(event.resource)?.id === event.id) {
      resources.delete(event.resource);
      if (!resources.size) this.#accounts.delete(event.bare);
    }
  }

  /** Loads every other node's sessions from Redis, replacing the copy. */
  async reload(): Promise<void> {
    const fresh = new Map<string, Map<string, SessionRecord>>();
    const nodes = (await this.redis.hkeys(this.keys.nodes)).filter((n) => n !== this.node);
    for (const node of nodes) {
      for (const { jid, record } of await nodeSessions(this.redis, this.keys, node)) {
        let resources = fresh.get(jid.bare);
        if (!resources) fresh.set(jid.bare, (resources = new Map()));
        resources.set(jid.resource!, record);
      }
    }
    this.#accounts.clear();
    for (const [bare, resources] of fresh) this.#accounts.set(bare, resources);
  }

  record(bare: string, resource: string): SessionRecord | undefined {
    return this.#accounts.get(bare)?.get(resource);
  }

  account(bare: string): ReadonlyMap<string, SessionRecord> | undefined {
    return this.#accounts.get(bare);
  }

  *entries(): Iterable<[bare: string, resource: string, record: SessionRecord]> {
    for (const [bare, resources] of this.#accounts) for (const [resource, record] of resources) yield [bare, resource, record];
  }

  get size(): number {
    let n = 0;
    for (const resources of this.#accounts.values()) n += resources.size;
    return n;
  }
}
