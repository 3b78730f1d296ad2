/**
 * A session bound on another node, as this node's router and modules see it: its JID, priority and presence
 * from the directory, and a stream that is the other node's inbox. Writing to it sends the stanza there
 * (that node runs the user_receive chain, where the session's state is); closing its outlet asks that node
 * to end it.
 */
import { fromStoredXml, type C2SSession, type ConnectionKind, type Jid, type StanzaOutlet, type StreamError, type XmlElement } from '@service/plugin-api';
import type { SessionRecord } from './records.js';

/** What a remote session needs of the cluster: reaching the node that carries it. */
export interface Peers {
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
    private readonly peers: Peers,
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

  /** The node that carries the session. */
  get node(): string {
    return this.record.node;
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
