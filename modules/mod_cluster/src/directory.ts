/**
 * The cluster's session directory in Redis: each node publishes the sessions bound on it (on bind, presence
 * change and close) and reports the other nodes' sessions to the server as a session source, as
 * RemoteSession objects whose writes go to the node that carries them. A full JID bound on two nodes follows
 * the conflict rule: the older session is replaced. Reads come from this node's copy (mirror.ts), kept
 * current by every node's announcements, so routing a stanza asks Redis nothing.
 */
import type { Redis } from 'ioredis';
import { Jid, RemoteSession, recordOf, type C2SSession, type SessionPeers, type SessionRecord, type SessionSource } from '@service/plugin-api';
import type { ClusterKeys } from './keys.js';
import type { DirectoryMirror } from './mirror.js';

/** Removes a session's record only if it is still this session's (a newer one may have replaced it). */
const UNPUBLISH = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current and cjson.decode(current).id == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
redis.call('SREM', KEYS[2], ARGV[3])
return 1`;

export class ClusterDirectory implements SessionSource {
  constructor(
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
    private readonly node: string,
    private readonly peers: SessionPeers,
    private readonly mirror: DirectoryMirror,
  ) {}

  /** Records a session of this node; an older session of the same full JID on another node is replaced. */
  async publish(session: C2SSession): Promise<void> {
    const key = this.keys.sessions(session.account.bare);
    const previous = await this.redis.hget(key, session.resource);
    const record = recordOf(session, this.node);
    await this.redis.multi().hset(key, session.resource, JSON.stringify(record)).sadd(this.keys.nodeSessions(this.node), session.jid.full).exec();
    await this.mirror.announce({ op: 'set', bare: session.account.bare, resource: session.resource, record });
    if (previous) {
      const old = JSON.parse(previous) as SessionRecord;
      if (old.node !== this.node && old.id !== session.id) await this.peers.close(old, session.jid.full, 'conflict', 'Replaced by a new connection on another node');
    }
  }

  /** Updates what the directory says of a session of this node (presence, priority). */
  async update(session: C2SSession): Promise<void> {
    const key = this.keys.sessions(session.account.bare);
    const current = await this.redis.hget(key, session.resource);
    if (!current || (JSON.parse(current) as SessionRecord).id !== session.id) return;
    const record = recordOf(session, this.node);
    await this.redis.hset(key, session.resource, JSON.stringify(record));
    await this.mirror.announce({ op: 'set', bare: session.account.bare, resource: session.resource, record });
  }

  async unpublish(session: C2SSession): Promise<void> {
    await this.redis.eval(UNPUBLISH, 2, this.keys.sessions(session.account.bare), this.keys.nodeSessions(this.node), session.resource, session.id, session.jid.full);
    await this.mirror.announce({ op: 'del', bare: session.account.bare, resource: session.resource, id: session.id });
  }

  /**
   * A session of this node moved to another node (a resumption there): it leaves this node's set; its
   * record stays, for the new node to overwrite when it publishes the session as its own.
   */
  async released(session: C2SSession): Promise<void> {
    await this.redis.srem(this.keys.nodeSessions(this.node), session.jid.full);
  }

  /** The record of the session of `bare` with this id, wherever it is bound, from this node's copy. */
  find(bare: string, id: string): { full: string; record: SessionRecord } | undefined {
    return this.mirror.table.find(bare, id);
  }

  /** Removes a node's sessions (it died, or left); returns them, as sessions, for the presence they leave. */
  async removeNode(node: string): Promise<RemoteSession[]> {
    const removed: RemoteSession[] = [];
    for (const { jid, record } of await nodeSessions(this.redis, this.keys, node)) {
      await this.redis.hdel(this.keys.sessions(jid.bare), jid.resource!);
      removed.push(new RemoteSession(jid, record, this.peers));
    }
    await this.redis.del(this.keys.nodeSessions(node));
    this.mirror.table.apply({ op: 'node-gone', node });
    await this.mirror.announce({ op: 'node-gone', node });
    return removed;
  }

  /** This node's sessions, all of them again (after it was taken for dead). */
  async republish(sessions: readonly C2SSession[]): Promise<void> {
    for (const session of sessions) if (!session.closed) await this.publish(session);
  }

  // SessionSource: the other nodes' sessions, from this node's copy.

  async get(full: string): Promise<C2SSession | undefined> {
    const known = await this.mirror.table.get(full);
    if (known) return known;
    // A session bound elsewhere a moment ago may not have reached the copy yet: Redis says for sure (a miss
    // here is rare: a stanza to a full JID with no session on this node).
    const jid = Jid.tryParse(full);
    if (!jid?.resource) return undefined;
    const json = await this.redis.hget(this.keys.sessions(jid.bare), jid.resource);
    const record = json ? (JSON.parse(json) as SessionRecord) : undefined;
    return record && record.node !== this.node ? new RemoteSession(jid, record, this.peers) : undefined;
  }

  byAccount(bare: string): Promise<C2SSession[]> {
    return this.mirror.table.byAccount(bare);
  }

  accounts(): Promise<string[]> {
    return this.mirror.table.accounts();
  }

  all(): Promise<C2SSession[]> {
    return this.mirror.table.all();
  }

  count(): Promise<number> {
    return this.mirror.table.count();
  }

  /** How many sessions a node carries, as the directory says. */
  countNode(node: string): Promise<number> {
    return this.redis.scard(this.keys.nodeSessions(node));
  }

  countHost(host: string): Promise<number> {
    return this.mirror.table.countHost(host);
  }
}

/** The sessions the directory says a node carries: its full JIDs whose record still names it. */
export async function nodeSessions(redis: Redis, keys: ClusterKeys, node: string): Promise<Array<{ jid: Jid; record: SessionRecord }>> {
  const out: Array<{ jid: Jid; record: SessionRecord }> = [];
  for (const full of await redis.smembers(keys.nodeSessions(node))) {
    const jid = Jid.tryParse(full);
    if (!jid?.resource) continue;
    const json = await redis.hget(keys.sessions(jid.bare), jid.resource);
    const record = json ? (JSON.parse(json) as SessionRecord) : undefined;
    if (record?.node === node) out.push({ jid, record });
  }
  return out;
}
