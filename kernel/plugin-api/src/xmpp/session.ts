/**
 * A bound client session as modules see it: a full JID with its presence and priority, what routing delivers
 * to. The stream carrying it is separate (`StanzaOutlet`), so that stream management can keep a session while
 * its connection is gone and give it a new one on resumption. The server implements it; modules only read it,
 * write to it, and keep their per-session state in it.
 */
import type { Jid } from '../jid/jid.js';
import type { XmlElement } from '../xml/element.js';
import type { StreamError } from './errors.js';

/** Where a session's stanzas go: the stream it is bound on. */
export interface StanzaOutlet {
  write(stanza: XmlElement): void;
  /** Ends the stream, with a stream error when given. */
  close(error?: StreamError): void;
  /**
   * Handles a stanza as if the client had sent it on this stream, after what it already sent (`from` is
   * stamped with the session's JID). Resolves false when the stream no longer carries a bound session.
   */
  sendAsClient?(stanza: XmlElement): Promise<boolean>;
}

export type ConnectionKind = 'c2s' | 'c2s_tls' | 'websocket';

export interface SessionInfo {
  readonly jid: Jid;
  readonly connection: ConnectionKind;
  readonly ip: string;
  readonly port: number;
}

export interface C2SSession {
  /** Unique, also across resumptions of the same stream (stream management uses it as its id). */
  readonly id: string;
  readonly startedAt: number;
  readonly jid: Jid;
  readonly connection: ConnectionKind;
  ip: string;
  port: number;
  priority: number;
  /** Sent initial presence and not unavailable since. */
  available: boolean;
  /** The last presence the client broadcast (no 'to'). */
  presence: XmlElement | undefined;
  /** Set once the session is gone for good. */
  closed: boolean;
  /** The bare JID. */
  readonly account: Jid;
  readonly resource: string;
  /** The show value of the last presence: available, chat, away, dnd, xa or unavailable. */
  readonly show: string;
  readonly statusText: string;
  readonly outlet: StanzaOutlet | undefined;
  /** The cluster node that carries the session, when it is not this node (a session a source reports). */
  readonly node?: string;
  /**
   * True when another process carries the session (another worker of this machine, or a cluster node): its
   * per-module state lives there, and what is delivered to it runs user_receive there.
   */
  readonly remote?: boolean;
  /** Replaces the stream (resumption) or removes it (connection lost, session kept): stanzas then wait. */
  setOutlet(outlet: StanzaOutlet | undefined): void;
  /**
   * Sends a stanza on the client's behalf (set_presence, send_stanza_c2s): the stream handles it exactly as
   * one its client sent. Resolves false when the session has no stream now.
   */
  sendAsClient(stanza: XmlElement): Promise<boolean>;
  /** Writes to the stream now, after the user_receive chain (see Router.deliverToSession). */
  write(stanza: XmlElement): boolean;
  /** Per-module state (carbons enabled, stream management counters…), created on first use, gone with the session. */
  state<T>(key: string, init: () => T): T;
  peekState<T>(key: string): T | undefined;
}
