/**
 * A session carried by another process (a node of a cluster, another worker of this machine), as this
 * process's router and modules see it: its JID, priority and presence from a record the carrying process
 * published, and a stream that is a message to that process. Writing to it sends the stanza there (that
 * process runs the user_receive chain, where the session's state is); closing its outlet asks it to end the
 * session. Whoever links processes (mod_cluster over Redis, the kernel's workers over local sockets) says how
 * a message reaches the carrier (SessionPeers) and builds the rest from here, so both behave alike.
 */
import type { Jid } from '../jid/jid.js';
import { fromStoredXml, toStoredXml } from '../xml/stored.js';
import type { XmlElement } from '../xml/element.js';
import type { StreamError } from './errors.js';
import type { C2SSession, ConnectionKind, StanzaOutlet } from './session.js';

/**
 * What a directory of sessions holds for a session of another process: enough to route to it and to answer
 * the session commands (connected_users_info…) without asking the process that carries it.
 */
export interface SessionRecord {
  /** The carrying process: a cluster node's name, or a worker's. */
  readonly node: string;
  readonly id: string;
  readonly started: number;
  readonly connection: ConnectionKind;
  readonly ip: string;
  readonly port: number;
  readonly priority: number;
  readonly available: boolean;
  readonly show: string;
  readonly status: string;
  /** The last broadcast presence, as stored XML. */
  readonly presence?: string;
}

export function recordOf(session: C2SSession, node: string): SessionRecord {
  return {
    node,
    id: session.id,
    started: session.startedAt,
    connection: session.connection,
    ip: session.ip,
    port: session.port,
    priority: session.priority,
    available: session.available,
    show: session.show,
    status: session.statusText,
    ...(session.presence ? { presence: toStoredXml(session.presence) } : {}),
  };
}

/** What a remote session needs of the link between processes: reaching the one that carries it. */
export interface SessionPeers {
  /** The node name commands show for a session of `record.node`; undefined when it is this node (a worker of this machine). */
  nodeOf(record: SessionRecord): string | undefined;
  /** Sends a stanza to a session of `record.node`; false when that node cannot be reached (the caller bounces). */
  deliver(record: SessionRecord, full: string, stanza: XmlElement): boolean;
  /** Asks `record.node` to end a session with a stream error. */
  close(record: SessionRecord, full: string, condition: string, text: string): Promise<void>;
  /** Asks `record.node` to handle a stanza as if the session's client had sent it. */
  sendAsClient(record: SessionRecord, full: string, stanza: XmlElement): Promise<boolean>;
}

export class RemoteSession implements C2SSession {
  readonly id: string;
  readonly startedAt: number;
  readonly connection: ConnectionKind;
  ip: string;
  port: number;
  priority: number;
  available: boolean;
  closed = false;
  readonly remote = true;
  readonly account: Jid;
  readonly resource: string;
  readonly show: string;
  readonly statusText: string;
  readonly outlet: StanzaOutlet;
  readonly #state = new Map<string, unknown>();
  /** The presence as parsed, once asked for: routing to the session never needs it, presence probes do. */
  #presence: XmlElement | undefined | null = null;

  constructor(
    readonly jid: Jid,
    readonly record: SessionRecord,
    private readonly peers: SessionPeers,
  ) {
    this.id = record.id;
    this.startedAt = record.started;
    this.connection = record.connection;
    this.ip = record.ip;
    this.port = record.port;
    this.priority = record.priority;
    this.available = record.available;
    this.account = jid.toBare();
    this.resource = jid.resource ?? '';
    this.show = record.show;
    this.statusText = record.status;
    this.outlet = {
      write: (stanza) => void this.write(stanza),
      close: (error?: StreamError) => void peers.close(record, jid.full, error?.condition ?? 'reset', error?.text ?? ''),
      sendAsClient: (stanza) => peers.sendAsClient(record, jid.full, stanza),
    };
  }

  get presence(): XmlElement | undefined {
    if (this.#presence === null) this.#presence = this.record.presence ? fromStoredXml(this.record.presence) : undefined;
    return this.#presence;
  }

  set presence(presence: XmlElement | undefined) {
    this.#presence = presence;
  }

  /** The node that carries the session as commands show it (undefined: this node, another worker of it). */
  get node(): string | undefined {
    return this.peers.nodeOf(this.record);
  }

  setOutlet(): void {
    // The stream is the other node's: nothing to replace here.
  }

  sendAsClient(stanza: XmlElement): Promise<boolean> {
    return this.peers.sendAsClient(this.record, this.jid.full, stanza);
  }

  write(stanza: XmlElement): boolean {
    return this.peers.deliver(this.record, this.jid.full, stanza);
  }

  state<T>(key: string, init: () => T): T {
    if (!this.#state.has(key)) this.#state.set(key, init());
    return this.#state.get(key) as T;
  }

  peekState<T>(key: string): T | undefined {
    return this.#state.get(key) as T | undefined;
  }
}
