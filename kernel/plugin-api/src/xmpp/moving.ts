/**
 * Moving a bound session from one node to another: stream management resumption on a node of a cluster
 * other than the one that carried the stream (XEP-0198 §5 leaves where to resume to the server). The
 * session does not end on its old node and start on the new one: it moves, with its JID, id, presence and
 * the per-session state of every module that declared how to carry it. Its contacts see nothing, and what
 * its client had not acknowledged is sent again from the new node.
 *
 *   - A module that keeps per-session state (`session.state(key)`) which must survive a move registers a
 *     SessionStateCarrier: how to write that state as JSON, and how to read it back on the new node.
 *   - A module that reaches other nodes (a cluster) registers a SessionMover: it fetches a session by
 *     account and id from the node that carries it, which releases it (XmppApi.releaseSession).
 *   - Stream management asks XmppApi.moveSessionHere when a resumption names a session this node does not
 *     carry.
 */
import type { C2SSession, ConnectionKind } from './session.js';

/** What JSON can hold: what a carrier writes. */
export type MovableValue = string | number | boolean | null | MovableValue[] | { [key: string]: MovableValue };

/** How one module's per-session state crosses to another node. */
export interface SessionStateCarrier {
  /** The key the module's state has in the session (`session.state(key, …)`); one carrier per key. */
  readonly key: string;
  /** Whether the session may move at all; a session any carrier refuses stays where it is. Default: yes. */
  movable?(session: C2SSession): boolean;
  /**
   * The state as JSON, as the session leaves this node (undefined: nothing to carry). Called once, when the
   * session is released: timers the module keeps for the session stop here.
   */
  save(session: C2SSession): MovableValue | undefined;
  /** Puts the saved state into the session on its new node, before anything is delivered to it. */
  restore(session: C2SSession, saved: MovableValue): void;
}

/** A session as it travels between nodes. */
export interface MovedSession {
  readonly id: string;
  readonly startedAt: number;
  /** The full JID. */
  readonly jid: string;
  readonly connection: ConnectionKind;
  readonly priority: number;
  readonly available: boolean;
  /** The last broadcast presence, as stored XML (toStoredXml). */
  readonly presence?: string;
  /** What each carrier saved, by its key. */
  readonly state: Readonly<Record<string, MovableValue>>;
}

/** Fetches a session another node carries (a cluster module). */
export interface SessionMover {
  /**
   * The session of `account` (a bare JID) with this id, released by the node that carried it; undefined
   * when no node carries it, or when it may not move. Rejects only when the other node could not answer.
   */
  take(account: string, id: string): Promise<MovedSession | undefined>;
}
