/**
 * A bound client session: a full JID with its presence and priority, what routing delivers to. The stream
 * carrying it is separate (`StanzaOutlet`), so that stream management can keep a session while its
 * connection is gone and give it a new one on resumption.
 */
import { randomId } from '@service/plugin-api';
import type { C2SSession, ConnectionKind, Jid, SessionInfo, StanzaOutlet, XmlElement } from '@service/plugin-api';

export type { C2SSession, ConnectionKind, SessionInfo, StanzaOutlet } from '@service/plugin-api';

/** Whether a session is bound on this node's streams, not one a session source reports (another node's). */
export function isLocalSession(session: C2SSession): boolean {
  return session instanceof Session;
}

/** The server's session record: what the plugin API's C2SSession describes. */
export class Session implements C2SSession {
  /** Unique, also across resumptions of the same stream (stream management uses it as its id). */
  readonly id: string;
  readonly startedAt: number;
  readonly jid: Jid;
  readonly connection: ConnectionKind;
  ip: string;
  port: number;
  priority = 0;
  /** Sent initial presence and not unavailable since. */
  available = false;
  /** The last presence the client broadcast (no 'to'). */
  presence: XmlElement | undefined;
  /** Set once the session is gone for good. */
  closed = false;
  #outlet: StanzaOutlet | undefined;
  /** Per-module state (carbons enabled, stream management counters…), cleared with the session. */
  readonly #state = new Map<string, unknown>();

  /** `moved`: the identity of a session that moved here from another node (see XmppService.moveSessionHere). */
  constructor(info: SessionInfo, outlet: StanzaOutlet | undefined, moved?: { readonly id: string; readonly startedAt: number }) {
    this.id = moved?.id ?? randomId(12);
    this.startedAt = moved?.startedAt ?? Date.now();
    this.jid = info.jid;
    this.connection = info.connection;
    this.ip = info.ip;
    this.port = info.port;
    this.#outlet = outlet;
  }

  get account(): Jid {
    return this.jid.toBare();
  }

  get resource(): string {
    return this.jid.resource!;
  }

  /** The show value of the last presence: available, chat, away, dnd, xa or unavailable. */
  get show(): string {
    if (!this.available) return 'unavailable';
    return this.presence?.getChildText('show') || 'available';
  }

  get statusText(): string {
    return this.presence?.getChildText('status') ?? '';
  }

  get outlet(): StanzaOutlet | undefined {
    return this.#outlet;
  }

  /** Replaces the stream (resumption) or removes it (connection lost, session kept): stanzas then wait. */
  setOutlet(outlet: StanzaOutlet | undefined): void {
    this.#outlet = outlet;
  }

  /**
   * Sends a stanza on the client's behalf (set_presence, send_stanza_c2s): the stream handles it exactly as
   * one its client sent (presence recorded, user_send, routing, presence hooks). Resolves false when the
   * session has no stream now (detached by stream management, or closed).
   */
  sendAsClient(stanza: XmlElement): Promise<boolean> {
    return this.#outlet?.sendAsClient?.(stanza) ?? Promise.resolve(false);
  }

  /** Writes to the stream now, after the user_receive chain (see Router.deliverToSession). */
  write(stanza: XmlElement): boolean {
    if (!this.#outlet) return false;
    this.#outlet.write(stanza);
    return true;
  }

  state<T>(key: string, init: () => T): T {
    if (!this.#state.has(key)) this.#state.set(key, init());
    return this.#state.get(key) as T;
  }

  peekState<T>(key: string): T | undefined {
    return this.#state.get(key) as T | undefined;
  }
}
