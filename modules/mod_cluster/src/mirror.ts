/**
 * This node's copy of the other nodes' sessions, so that routing reads memory instead of asking Redis for
 * every stanza. Each node announces what it publishes, updates and removes in the directory on a pub/sub
 * channel (`svc:<cluster>:sessions`); the copy (the plugin API's RemoteSessionTable) applies those announcements, and is loaded again from Redis at
 * start and whenever the subscription comes back after a cut (announcements may have been missed). Redis stays
 * the reference: a full JID the copy does not know is still looked up there (see ClusterDirectory.get).
 */
import type { Redis } from 'ioredis';
import type { Logger, RemoteSessionTable, SessionAnnouncement, SessionRecord } from '@service/plugin-api';
import { nodeSessions } from './directory.js';
import type { ClusterKeys } from './keys.js';

export class DirectoryMirror {
  #wasReady = false;

  constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly keys: ClusterKeys,
    private readonly node: string,
    /** The copy itself (the plugin API's table of other processes' sessions). */
    readonly table: RemoteSessionTable,
    private readonly logger: Logger,
  ) {}

  /** Subscribes (on the shared events connection, already connected) and loads the other nodes' sessions. */
  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.keys.sessionEvents) return;
      try {
        this.table.apply(JSON.parse(text) as SessionAnnouncement);
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

  /** Loads every other node's sessions from Redis, replacing the copy. */
  async reload(): Promise<void> {
    const fresh: Array<[string, string, SessionRecord]> = [];
    const nodes = (await this.redis.hkeys(this.keys.nodes)).filter((n) => n !== this.node);
    for (const node of nodes) for (const { jid, record } of await nodeSessions(this.redis, this.keys, node)) fresh.push([jid.bare, jid.resource!, record]);
    this.table.replace(fresh);
  }
}
