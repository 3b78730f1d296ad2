/**
 * One node's part of the cluster, wired together: Redis connections, membership and heartbeat, the session
 * directory and the inbox. Sessions bound here are published; stanzas for sessions on other nodes go to
 * their node's inbox; what arrives in this node's inbox is written to its sessions; a dead node's sessions
 * leave the directory (their contacts get unavailable presence once) and what it had not read is routed
 * again.
 */
import type { Redis } from 'ioredis';
import {
  StanzaError,
  StreamError,
  fromStoredXml,
  toStoredXml,
  type C2SSession,
  type Logger,
  type NodeTransport,
  type ServerServices,
  type SessionPeers,
  type SessionRecord,
  type SessionSource,
  RemoteSessionTable,
  SessionHandover,
  type StreamErrorCondition,
  type XmlElement,
} from '@service/plugin-api';
import { ClusterDirectory } from './directory.js';
import { Inbox, type InboxEntry } from './inbox.js';
import { Invalidations } from './invalidations.js';
import { DirectoryMirror } from './mirror.js';
import { ClusterKeys } from './keys.js';
import { Membership } from './membership.js';
import { NodeCalls } from './node-calls.js';
import { OWNERS_CACHE, Ownership } from './ownership.js';
import type { ClusterApi, ClusterMember } from './public-api.js';
import { openRedis } from './redis.js';

export interface ClusterSettings {
  readonly redisUrl: string;
  readonly cluster: string;
  readonly cookie: string;
  readonly node: string;
  readonly version: string;
  readonly heartbeatMs: number;
  readonly timeoutMs: number;
}

export class ClusterNode implements ClusterApi, SessionPeers {
  readonly node: string;
  readonly directory: ClusterDirectory;
  readonly #redis: Redis;
  readonly #blocking: Redis;
  readonly #membership: Membership;
  readonly #inbox: Inbox;
  readonly invalidations: Invalidations;
  readonly #mirror: DirectoryMirror;
  readonly #events: Redis;
  /** Sessions moving between nodes for a resumption (the plugin API's SessionHandover): the session mover this module registers. */
  readonly moves: SessionHandover;
  /** Which node owns a module's key (NodesApi.owner). */
  readonly #ownership: Ownership;
  /** Calls to other nodes' channels, and theirs to this node's. */
  readonly #calls: NodeCalls;

  constructor(
    private readonly settings: ClusterSettings,
    private readonly services: ServerServices,
    private readonly logger: Logger,
  ) {
    this.node = settings.node;
    const keys = new ClusterKeys(settings.cluster);
    this.#redis = openRedis(settings.redisUrl, 'commands', this.node, logger);
    this.#blocking = openRedis(settings.redisUrl, 'inbox', this.node, logger);
    // One subscriber connection for both channels: directory changes and cache invalidations.
    this.#events = openRedis(settings.redisUrl, 'events', this.node, logger);
    this.#mirror = new DirectoryMirror(this.#redis, this.#events, keys, this.node, new RemoteSessionTable(this.node, this), logger);
    this.directory = new ClusterDirectory(this.#redis, keys, this.node, this, this.#mirror);
    this.#membership = new Membership(
      this.#redis,
      keys,
      { name: this.node, started: Date.now(), version: settings.version },
      { heartbeatMs: settings.heartbeatMs, timeoutMs: settings.timeoutMs },
      (dead) => this.#cleanUpAfter(dead),
      () => this.#rejoin(),
      logger,
      (gone) => this.#nodeGone(gone),
    );
    this.#inbox = new Inbox(this.#redis, this.#blocking, keys, this.node, (entry) => this.#handle(entry), logger);
    this.moves = new SessionHandover({
      node: this.node,
      find: (account, id) => this.directory.find(account, id),
      released: (session) => this.directory.released(session),
      xmpp: services.xmpp,
      logger,
      isMember: () => this.member,
      isLive: (node) => this.#membership.isLive(node),
      send: (node, entry) => this.#inbox.send(node, entry),
    });
    this.invalidations = new Invalidations(this.#redis, this.#events, keys, this.node, services.caches, logger);
    this.#calls = new NodeCalls(this.node, services.processes, (node, entry) => this.#inbox.send(node, entry), logger);
    this.#ownership = new Ownership(this.#redis, keys, this.node, (node) => this.#membership.isLive(node), services.caches, (key) => this.invalidations.publish(OWNERS_CACHE, key));
  }

  /** NodesApi over the cluster: the server's view of the nodes while this module runs. */
  readonly transport: NodeTransport = {
    member: () => this.member,
    live: () => {
      const live = this.#membership.live();
      return live.includes(this.node) ? live : [...live, this.node].sort();
    },
    owner: (key) => this.#ownership.owner(key),
    release: (key) => this.#ownership.release(key),
    master: () => this.master(),
    call: (node, name, payload, order) => this.#calls.call(node, name, payload, order),
  };

  async start(): Promise<void> {
    await this.#redis.connect();
    await this.#membership.join(this.settings.cookie);
    await this.#inbox.start();
    await this.#events.connect();
    await this.invalidations.start();
    await this.#mirror.start();
  }

  /** Whether this node left the cluster (leave_cluster) and now serves alone until mod_cluster restarts. */
  #left = false;

  /** Whether this node is in the cluster (it did not leave). */
  get member(): boolean {
    return !this.#left;
  }

  /** The other nodes' sessions, as the server's session source: none once this node left. */
  readonly source: SessionSource = {
    get: (full) => (this.member ? this.directory.get(full) : Promise.resolve(undefined)),
    byAccount: (bare) => (this.member ? this.directory.byAccount(bare) : Promise.resolve([])),
    accounts: () => (this.member ? this.directory.accounts() : Promise.resolve([])),
    all: () => (this.member ? this.directory.all() : Promise.resolve([])),
    count: () => (this.member ? this.directory.count() : Promise.resolve(0)),
    countHost: (host) => (this.member ? this.directory.countHost(host) : Promise.resolve(0)),
  };

  /** leave_cluster for this node: out of the cluster, still serving its own clients. */
  async leave(): Promise<void> {
    if (this.#left) return;
    await this.stop();
    this.#left = true;
    this.logger.notice({ node: this.node }, 'node %s left the cluster: it serves its own clients alone until mod_cluster restarts', this.node);
  }

  /** leave_cluster for another node: a running one is told to leave; a dead one is cleaned up after now. */
  async removeMember(node: string, alive: boolean): Promise<void> {
    if (alive) {
      await this.#inbox.send(node, { kind: 'leave', to: node });
      return;
    }
    await this.#cleanUpAfter(node);
    await this.#membership.forget(node);
  }

  /** Leaves the cluster: this node's sessions leave the directory, its record and heartbeat go. */
  async stop(): Promise<void> {
    if (this.#left) return;
    try {
      await this.directory.removeNode(this.node);
      await this.#ownership.forgetNode(this.node);
      await this.#membership.leave();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'leaving the cluster cleanly failed: %s', (err as Error).message);
      this.#membership.stop();
    }
    await this.#inbox.stop();
    this.invalidations.stop();
    this.#ownership.stop();
    this.#redis.disconnect();
  }

  // ClusterApi

  cookie(): string {
    return this.settings.cookie;
  }

  members(): Promise<ClusterMember[]> {
    return this.#membership.members();
  }

  master(): Promise<string | undefined> {
    return this.#membership.master();
  }

  async isMaster(): Promise<boolean> {
    return (await this.master()) === this.node;
  }

  setMaster(name: string): Promise<void> {
    return this.#membership.setMaster(name);
  }

  // SessionPeers: reaching the sessions of other nodes.

  nodeOf(record: SessionRecord): string {
    return record.node;
  }

  deliver(record: SessionRecord, full: string, stanza: XmlElement): boolean {
    if (!this.#membership.isLive(record.node)) {
      void this.services.xmpp.router.bounce(stanza, new StanzaError('recipient-unavailable', `the node carrying ${full} cannot be reached`));
      return false;
    }
    const unreachable = () => void this.services.xmpp.router.bounce(stanza, new StanzaError('recipient-unavailable', `the node carrying ${full} cannot be reached`));
    this.#inbox.post(record.node, { kind: 'deliver', to: full, xml: toStoredXml(stanza) }, (added) => {
      if (added === true) return;
      if (added instanceof Error) this.logger.warn({ node: record.node, err: added.message }, 'a stanza for %s could not be handed to node %s: %s', full, record.node, added.message);
      unreachable();
    });
    return true;
  }

  async close(record: SessionRecord, full: string, condition: string, text: string): Promise<void> {
    await this.#inbox.send(record.node, { kind: 'close', to: full, condition, text });
  }

  async sendAsClient(record: SessionRecord, full: string, stanza: XmlElement): Promise<boolean> {
    if (!this.#membership.isLive(record.node)) return false;
    return this.#inbox.send(record.node, { kind: 'send', to: full, xml: toStoredXml(stanza) });
  }

  // What other nodes ask of this one.

  async #handle(entry: InboxEntry): Promise<void> {
    if (entry.kind === 'leave') {
      // After this entry is handled: the inbox loop stops with the rest.
      setImmediate(() => void this.leave());
      return;
    }
    if (entry.kind === 'taken') return this.moves.onTaken(entry);
    if (entry.kind === 'call') return this.#calls.onCall(entry);
    if (entry.kind === 'answer') return this.#calls.onAnswer(entry);
    const session = await this.#localSession(entry.to);
    if (entry.kind === 'take') return this.moves.onTake(entry, session);
    if (entry.kind === 'close') {
      if (session) await this.services.xmpp.kick(session, new StreamError(entry.condition as StreamErrorCondition, entry.text || undefined));
      return;
    }
    const stanza = fromStoredXml(entry.xml);
    if (entry.kind === 'send') {
      if (session) await session.sendAsClient(stanza);
      return;
    }
    // The last step to the client, here where its session's state is: user_receive (stream management
    // counts and queues it), then the stream. A session gone meanwhile gets what RFC 6121 gives a stanza
    // for a resource that is not there.
    if (session) return this.services.xmpp.router.deliverToSession(session, stanza);
    // A session that just moved to another node (a resumption there) gets what was sent here meanwhile.
    const movedTo = this.moves.forwardTo(entry.to);
    if (!movedTo || !(await this.#inbox.send(movedTo, entry))) await this.services.xmpp.router.route(stanza);
  }

  async #localSession(full: string): Promise<C2SSession | undefined> {
    const session = await this.services.xmpp.sessions.get(full);
    return session && !session.closed && this.services.xmpp.isLocal(session) ? session : undefined;
  }

  /** A node died: its sessions leave (their contacts are told, once), and what it had not read is routed again. */
  async #cleanUpAfter(dead: string): Promise<void> {
    const sessions = await this.directory.removeNode(dead);
    for (const session of sessions) {
      session.closed = true;
      await this.services.hooks.run('c2s_session_closed', session);
    }
    const pending = await this.#inbox.drain(dead);
    for (const entry of pending) if (entry.kind === 'deliver') await this.services.xmpp.router.route(fromStoredXml(entry.xml));
    await this.#ownership.forgetNode(dead);
    this.logger.notice({ node: dead, sessions: sessions.length, rerouted: pending.length }, 'node %s removed: %d sessions ended, %d stanzas routed again', dead, sessions.length, pending.length);
  }

  /** A node this one saw alive is dead or left: calls waiting for it fail, and the modules take over what lived there. */
  #nodeGone(node: string): void {
    this.#calls.nodeGone(node);
    this.services.hooks.run('cluster_node_down', node).catch((err: Error) => this.logger.warn({ node, err: err.message }, 'taking over after node %s failed: %s', node, err.message));
  }

  async #rejoin(): Promise<void> {
    await this.directory.republish((await this.services.xmpp.sessions.all()).filter((s) => this.services.xmpp.isLocal(s)));
  }
}
