/**
 * One worker's part of a server that runs several (the `workers` option): what makes the workers of one
 * machine one server. It plugs into the routing port of the plugin API exactly as mod_cluster does across
 * machines — a session source (the other workers' sessions, as RemoteSessions) and a session mover (stream
 * management resumption on another worker) — over unix sockets instead of Redis:
 *
 *   - each worker announces its sessions (bound, presence changed, closed) to the others, which keep a copy
 *     (RemoteSessionTable), so routing to a session of another worker reads memory and writes to one socket;
 *   - the worker that carries a session runs the last step to it (user_receive), where its state is;
 *   - a full JID bound on two workers follows the conflict rule: the older session is replaced;
 *   - cache invalidations (a password changed, a token revoked, a ban) and failed logins reach every worker;
 *   - what changes a process's state (reload_config, modules, the log level) goes to every worker through
 *     the primary (supervisor.ts), which also says which workers are up and when one died.
 */
import {
  RemoteSessionTable,
  SessionHandover,
  StanzaError,
  StreamError,
  recordOf,
  type C2SSession,
  type ChannelValue,
  type MovedSession,
  type SessionAnnouncement,
  type SessionPeers,
  type SessionRecord,
  type StreamErrorCondition,
  type XmlElement,
} from '@service/plugin-api';
import { KeyedLock } from '@service/plugin-api';
import { join } from 'node:path';
import type { LoginThrottle } from '../accounts/login-throttle.js';
import type { Logger } from '../log/logger.js';
import type { KernelServices } from '../modules/services.js';
import type { PeerMessage, PrimaryToWorker, ServerAction, WorkerToPrimary } from './messages.js';
import { PeerConnection, PeerListener } from './peer-socket.js';
import { elementOf, treeOf } from '@service/plugin-api';
import { withTo } from '../xmpp/routing/router.js';

/** This process's place among the workers, from the environment the primary gave it. */
export interface WorkerIdentity {
  /** 1…count. Worker 1 also serves the control socket. */
  readonly index: number;
  readonly count: number;
  /**
   * No other worker runs while this one starts (worker 1 at the server's start, before the others are
   * forked): it alone holds the database files, so it may replace them (an installed fallback).
   */
  readonly alone?: boolean;
}

/** What a worker applies when another worker changed the server's state (the Server does it). */
export interface ServerActions {
  applyAction(action: ServerAction): Promise<void>;
  /** The primary stops the server: this worker stops gracefully and its process exits. */
  stopWorker(): void;
}

/** The name of a worker in session records and resumptions. */
export function workerName(index: number): string {
  return `worker-${index}`;
}

/** The kernel's channel that drops a cache entry in another worker and answers once it is dropped. */
const INVALIDATE_CHANNEL = 'kernel.invalidate';

function indexOf(name: string): number {
  return Number(name.slice('worker-'.length));
}

/** The unix socket a worker's peers write to. */
export function peerSocketPath(dataDir: string, index: number): string {
  return join(dataDir, `worker-${index}.sock`);
}

/** The longest a message for a session being taken from another worker waits for it to be registered here. */
const ARRIVAL_WAIT_MS = 6000;

export class WorkerLink implements SessionPeers {
  readonly name: string;
  readonly table: RemoteSessionTable;
  readonly handover: SessionHandover;
  #listener?: PeerListener;
  readonly #peers = new Map<number, PeerConnection>();
  readonly #connecting = new Set<number>();
  /**
   * Sessions this worker is taking from another for a resumption, by full JID, until they are registered
   * here: what other workers send for them meanwhile waits (under #order, so in order) instead of finding
   * no session.
   */
  readonly #arriving = new Map<string, { readonly registered: Promise<void>; readonly done: () => void }>();
  /** Entries for one session are handled in order; different sessions side by side. */
  readonly #order = new KeyedLock();
  #stopped = false;
  readonly #onPrimary = (message: PrimaryToWorker) => void this.#fromPrimary(message);

  constructor(
    readonly identity: WorkerIdentity,
    private readonly dataDir: string,
    private readonly services: KernelServices,
    private readonly logins: LoginThrottle,
    private readonly server: ServerActions,
    private readonly logger: Logger,
  ) {
    this.name = workerName(identity.index);
    this.table = new RemoteSessionTable(this.name, this);
    const xmpp = services.xmpp;
    this.handover = new SessionHandover({
      node: this.name,
      xmpp,
      logger,
      find: (account, id) => this.table.find(account, id),
      // What this worker routes to the session goes to its new worker from now, before that worker's own
      // announcement arrives (it holds what comes before the session is registered there: #arriving).
      released: async (session, to) => this.table.apply({ op: 'set', bare: session.account.bare, resource: session.resource, record: recordOf(session, to) }),
      isMember: () => true,
      isLive: (node) => this.#peerOf(node)?.closed === false,
      send: async (node, message) => this.#peerOf(node)?.send(message) ?? false,
    });
  }

  /** Opens this worker's socket and joins the others: its sessions announced, theirs routed to. */
  async start(): Promise<void> {
    const { services } = this;
    this.#listener = await PeerListener.open(peerSocketPath(this.dataDir, this.identity.index), (m) => this.#fromPeer(m as PeerMessage), this.logger);
    const local = (session: C2SSession) => services.xmpp.isLocal(session);
    const hooks = services.hooks;
    hooks.add('c2s_session_bound', (session) => (local(session) ? this.#announceSession(session) : undefined), 10);
    hooks.add('c2s_presence_changed', (session) => (local(session) ? this.#announceSession(session) : undefined));
    hooks.add('c2s_session_moved_in', (session) => {
      if (!local(session)) return;
      this.#announceSession(session);
      this.#arriving.get(session.jid.full)?.done();
    });
    hooks.add('c2s_session_closed', (session) => {
      if (local(session)) this.#broadcast({ kind: 'directory', event: { op: 'del', bare: session.account.bare, resource: session.resource, id: session.id } });
    }, 10);
    // Acknowledged: the change that dropped an entry (a password changed, a token revoked) returns once every
    // other worker dropped it too, so that no request served after it can pass with what was dropped.
    services.processes.register({ name: INVALIDATE_CHANNEL, handler: (payload) => this.#invalidated(payload) }, 'kernel');
    hooks.add('cache_invalidated', (cache, key) => this.#invalidateEverywhere(cache, key));
    hooks.add('clear_cache', () => this.#broadcast({ kind: 'invalidate', cache: '*' }));
    services.xmpp.addSessionSource(this.table, 'kernel');
    services.xmpp.router.carryFanOut({
      workerOf: (full) => {
        const slash = full.indexOf('/');
        const record = slash === -1 ? undefined : this.table.record(full.slice(0, slash), full.slice(slash + 1));
        return record ? indexOf(record.node) : undefined;
      },
      carry: (worker, stanza, recipients) => this.#peers.get(worker)?.send({ kind: 'route-each', recipients, stanza: treeOf(stanza) }) ?? false,
    });
    services.xmpp.addSessionMover({ take: (account, id) => this.#take(account, id) }, 'kernel');
    // At once, not at the end of the turn: a refused login is answered right after, and the client's next attempt
    // may reach another worker before this one's turn ends; the failure (or ban) must be there first.
    this.logins.observe((event) => this.#broadcast({ kind: 'login', ...event }, true));
    services.processes.connect((index, call) => this.#peers.get(index)?.send({ kind: 'call', from: this.identity.index, ...call }) ?? false);
    process.on('message', this.#onPrimary);
  }

  /** Tells the primary this worker serves (its listeners are open). */
  ready(): void {
    this.#toPrimary({ t: 'ready' });
  }

  /** Has every other worker apply an action this one applied. */
  everyWorker(action: ServerAction): void {
    this.#toPrimary({ t: 'action', action });
  }

  /** Stops (0) or halts (1) the whole server: the primary ends every worker, then itself. */
  exitServer(status: number): void {
    this.#toPrimary({ t: 'exit', status });
  }

  /** rotate_log: the primary renames the file once, then every worker opens it again. */
  rotateLog(): void {
    this.#toPrimary({ t: 'rotate-log' });
  }

  /** Leaves: what is queued goes out, the sockets close. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    process.off('message', this.#onPrimary);
    this.logins.observe(undefined);
    await Promise.all([...this.#peers.values()].map((peer) => peer.end().catch(() => {})));
    this.#peers.clear();
    await this.#listener?.close();
  }

  /** The connection to the worker a record or a handover names. */
  #peerOf(node: string): PeerConnection | undefined {
    return this.#peers.get(indexOf(node));
  }

  // SessionPeers: reaching the sessions of the other workers.

  nodeOf(): undefined {
    // Another worker of this node: commands show this node's name.
    return undefined;
  }

  deliver(record: SessionRecord, full: string, stanza: XmlElement): boolean {
    if (this.#peerOf(record.node)?.send({ kind: 'deliver', to: full, stanza: treeOf(stanza) })) return true;
    void this.services.xmpp.router.bounce(stanza, new StanzaError('recipient-unavailable', `the worker carrying ${full} cannot be reached`));
    return false;
  }

  async close(record: SessionRecord, full: string, condition: string, text: string): Promise<void> {
    this.#peerOf(record.node)?.send({ kind: 'close', to: full, condition, text });
  }

  async sendAsClient(record: SessionRecord, full: string, stanza: XmlElement): Promise<boolean> {
    return this.#peerOf(record.node)?.send({ kind: 'send', to: full, stanza: treeOf(stanza) }) ?? false;
  }

  /** SessionMover: the handover, with what arrives for the session meanwhile held until it is registered here. */
  async #take(account: string, id: string): Promise<MovedSession | undefined> {
    const found = this.table.find(account, id);
    if (!found) return undefined;
    let resolve!: () => void;
    const registered = new Promise<void>((r) => (resolve = r));
    // Registered (the hook ends the wait) or not coming: held messages go on either way, at the latest then.
    const timer = setTimeout(() => arrival.done(), ARRIVAL_WAIT_MS);
    const arrival = {
      registered,
      done: () => {
        clearTimeout(timer);
        if (this.#arriving.get(found.full) === arrival) this.#arriving.delete(found.full);
        resolve();
      },
    };
    this.#arriving.set(found.full, arrival);
    try {
      const moved = await this.handover.take(account, id);
      if (!moved) arrival.done();
      return moved;
    } catch (err) {
      arrival.done();
      throw err;
    }
  }

  // What is announced.

  #announceSession(session: C2SSession): void {
    const event: SessionAnnouncement = { op: 'set', bare: session.account.bare, resource: session.resource, record: recordOf(session, this.name) };
    // A session that moved here from another worker is no longer that worker's in this copy.
    this.table.apply(event);
    this.#broadcast({ kind: 'directory', event });
  }

  async #invalidateEverywhere(cache: string, key: string | undefined): Promise<void> {
    const payload = { cache, ...(key === undefined ? {} : { key }) };
    await Promise.all(
      [...this.#peers.keys()].map((index) =>
        this.services.processes.call(index, INVALIDATE_CHANNEL, payload).catch((err: Error) => {
          // A worker that is gone has no cache left; one that comes back starts empty.
          this.logger.warn({ worker: index, cache, err: err.message }, 'worker %d did not confirm dropping %s: %s', index, cache, err.message);
        }),
      ),
    );
  }

  #invalidated(payload: ChannelValue): null {
    const { cache, key } = payload as { cache: string; key?: string };
    this.services.caches.invalidateLocal(cache, key);
    return null;
  }

  #broadcast(message: PeerMessage, now = false): void {
    for (const peer of this.#peers.values()) peer.send(message, now);
  }

  #toPrimary(message: WorkerToPrimary): void {
    if (process.connected) process.send!(message);
  }

  // What the primary says.

  async #fromPrimary(message: PrimaryToWorker): Promise<void> {
    try {
      if (message.t === 'peers') await this.#connectTo(message.peers);
      else if (message.t === 'peer-gone') await this.#peerGone(message.index, message.reap);
      else if (message.t === 'action') await this.server.applyAction(message.action);
      else if (message.t === 'shutdown') this.server.stopWorker();
    } catch (err) {
      this.logger.error({ err, message: message.t }, 'handling a message of the primary failed: %s', (err as Error).message);
    }
  }

  /** How many workers serve, as the primary's last list of them says. */
  get serving(): { serving: number; count: number } {
    return { serving: Math.max(this.#serving, 1), count: this.identity.count };
  }

  #serving = 0;

  async #connectTo(peers: readonly number[]): Promise<void> {
    this.#serving = peers.length;
    for (const index of peers) {
      if (index === this.identity.index || this.#peers.has(index) || this.#connecting.has(index) || this.#stopped) continue;
      this.#connecting.add(index);
      try {
        const connection = await PeerConnection.connect(peerSocketPath(this.dataDir, index), index, this.logger, () => {
          if (this.#peers.get(index) === connection) this.#peers.delete(index);
        });
        this.#peers.set(index, connection);
        // What this worker carries and counts now: the peer's copy starts from it.
        connection.send({ kind: 'hello', from: this.identity.index });
        connection.send({ kind: 'logins', counters: this.logins.snapshot() });
        for (const session of this.services.xmpp.localSessions.all()) {
          if (!session.closed) {
            connection.send({ kind: 'directory', event: { op: 'set', bare: session.account.bare, resource: session.resource, record: recordOf(session, this.name) } });
          }
        }
      } catch (err) {
        this.logger.warn({ peer: index, err: (err as Error).message }, 'cannot reach worker %d: %s', index, (err as Error).message);
      } finally {
        this.#connecting.delete(index);
      }
    }
  }

  /** A worker died: its sessions leave the copy; the reaper tells their contacts, once for the server. */
  async #peerGone(index: number, reap: boolean): Promise<void> {
    const name = workerName(index);
    const sessions = this.table.sessionsOf(name);
    this.table.apply({ op: 'node-gone', node: name });
    const connection = this.#peers.get(index);
    this.#peers.delete(index);
    connection?.end().catch(() => {});
    this.services.processes.peerGone(index);
    if (!reap) return;
    for (const session of sessions) {
      session.closed = true;
      await this.services.hooks.run('c2s_session_closed', session);
    }
    this.logger.notice({ worker: index, sessions: sessions.length }, 'worker %d is gone: its %d sessions ended', index, sessions.length);
  }

  // What other workers say.

  #fromPeer(message: PeerMessage): void {
    switch (message.kind) {
      case 'hello':
        // A worker that (re)started: what the copy held of it is stale; its sessions follow.
        this.table.apply({ op: 'node-gone', node: workerName(message.from) });
        return;
      case 'directory':
        if (message.event.op === 'set') void this.#conflict(message.event.bare, message.event.resource, message.event.record);
        this.table.apply(message.event);
        return;
      case 'invalidate':
        this.services.caches.invalidateLocal(message.cache, message.key);
        return;
      case 'login': {
        const { kind: _kind, ...event } = message;
        this.logins.apply(event);
        return;
      }
      case 'logins':
        this.logins.merge(message.counters);
        return;
      case 'taken':
        this.handover.onTaken(message);
        return;
      case 'call':
        void this.#answerCall(message);
        return;
      case 'route-each': {
        const stanza = elementOf(message.stanza);
        // Each copy in order with what else comes for its session.
        for (const full of message.recipients) {
          void this.#order.run(full, () => this.services.xmpp.router.route(withTo(stanza, full))).catch((err: unknown) => {
            this.logger.error({ err, to: full }, 'routing a copy another worker handed over failed');
          });
        }
        return;
      }
      case 'answer': {
        const { kind: _kind, id, ...answer } = message;
        this.services.processes.settle(id, answer);
        return;
      }
      default:
        void this.#order.run(message.to, () => this.#forSession(message)).catch((err: unknown) => {
          this.logger.error({ err, kind: message.kind, to: message.to }, 'handling a message of another worker failed');
        });
    }
  }

  /** A module's channel called by another worker: the answer goes back on this worker's connection to it. */
  async #answerCall(call: Extract<PeerMessage, { kind: 'call' }>): Promise<void> {
    const answer = await this.services.processes.answer(call.name, call.payload, call.from);
    if (!this.#peers.get(call.from)?.send({ kind: 'answer', id: call.id, ...answer })) {
      this.logger.warn({ worker: call.from, channel: call.name }, 'the answer to a call of worker %d could not be sent: it is gone', call.from);
    }
  }

  /**
   * The conflict rule across workers: of two sessions with one full JID, the older is replaced. Each worker
   * checks what another announces against its own sessions, so whichever order the announcements cross in,
   * one session stays.
   */
  async #conflict(bare: string, resource: string, record: SessionRecord): Promise<void> {
    const mine = this.#localSession(`${bare}/${resource}`);
    if (!mine || mine.id === record.id) return;
    const other = indexOf(record.node);
    const older = mine.startedAt < record.started || (mine.startedAt === record.started && this.identity.index < other);
    if (older) await this.services.xmpp.kick(mine, new StreamError('conflict', 'Replaced by new connection'));
  }

  async #forSession(message: Extract<PeerMessage, { to: string }>): Promise<void> {
    await this.#arriving.get(message.to)?.registered;
    const session = this.#localSession(message.to);
    switch (message.kind) {
      case 'take':
        return this.handover.onTake(message, session);
      case 'close':
        if (session) await this.services.xmpp.kick(session, new StreamError(message.condition as StreamErrorCondition, message.text || undefined));
        return;
      case 'send':
        if (session) await session.sendAsClient(elementOf(message.stanza));
        return;
      case 'deliver': {
        const stanza = elementOf(message.stanza);
        if (session) return this.services.xmpp.router.deliverToSession(session, stanza);
        // A session that just moved to another worker (a resumption there) gets what was sent here meanwhile.
        const movedTo = this.handover.forwardTo(message.to);
        if (movedTo && this.#peerOf(movedTo)?.send(message)) return;
        return this.services.xmpp.router.route(stanza);
      }
    }
  }

  #localSession(full: string): C2SSession | undefined {
    const session = this.services.xmpp.localSessions.get(full);
    return session && !session.closed ? session : undefined;
  }
}
