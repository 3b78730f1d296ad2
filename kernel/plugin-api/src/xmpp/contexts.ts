/**
 * What each middleware chain's layers receive. The chains, in the order a stanza meets them:
 *
 *   stream_in     every element a client sends after authentication (stream management counts and
 *                 answers its own elements here)
 *   user_send     a stanza from a local client, addressed and stamped, before routing (carbons' sent
 *                 copies, outgoing privacy, presence broadcast)
 *   deliver       a stanza arriving for a local account (bare or full), before sessions are chosen
 *                 (roster subscriptions, probes, blocking, received carbons)
 *   offline       a message for an account with no session to take it (offline storage); the default
 *                 answers <service-unavailable/>
 *   user_receive  a stanza about to be written to one session (per-resource privacy, stream management's
 *                 unacknowledged queue)
 */
import type { Jid } from '../jid/jid.js';
import type { C2SSession } from './session.js';
import type { XmlElement } from '../xml/element.js';

export interface StreamInContext {
  readonly element: XmlElement;
  /** Undefined until a resource is bound (e.g. a stream management <resume/>). */
  readonly session: C2SSession | undefined;
  /** The authenticated account. */
  readonly account: Jid;
  readonly stream: StreamControl;
}

/** What stream-level middleware may do with the stream itself. */
export interface StreamControl {
  /** Writes an element directly (stream management's <a/>, <enabled/>…), bypassing the stanza chains. */
  sendElement(element: XmlElement): void;
  /**
   * Adopts a detached session (stream management resumption): this stream now carries it. False, and
   * nothing changes, when this stream has closed meanwhile (while the session was being looked up).
   */
  adopt(session: C2SSession): boolean;
  readonly id: string;
}

export interface SendContext {
  stanza: XmlElement;
  readonly session: C2SSession;
  readonly from: Jid;
  /** Undefined when the stanza has no 'to'. */
  readonly to: Jid | undefined;
}

export interface DeliverContext {
  stanza: XmlElement;
  readonly from: Jid;
  /** The local account addressed (bare), or one of its resources (full). */
  readonly to: Jid;
  /** Filled by the default delivery: the sessions that got the stanza. */
  delivered: C2SSession[];
}

export interface OfflineContext {
  readonly stanza: XmlElement;
  readonly from: Jid;
  /** The bare JID of the account. */
  readonly to: Jid;
}

export interface ReceiveContext {
  stanza: XmlElement;
  readonly session: C2SSession;
}
