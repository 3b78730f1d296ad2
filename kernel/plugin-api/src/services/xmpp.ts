/**
 * The XMPP side of the server as modules use it: the directory of bound sessions, the router, what service
 * discovery announces, and the end of sessions. Modules register IQ handlers, middleware, features, disco
 * entries, SASL mechanisms, domains and session sources through their instance (see ModuleInstance.xmpp),
 * not here.
 */
import type { Jid } from '../jid/jid.js';
import type { XmlElement } from '../xml/element.js';
import type { DiscoIdentity, DiscoScope } from '../xmpp/disco.js';
import type { StanzaError, StreamError } from '../xmpp/errors.js';
import type { MovedSession } from '../xmpp/moving.js';
import type { C2SSession } from '../xmpp/session.js';

/**
 * Every bound session, by full JID and by account: this node's own, then those of every session source a
 * module registered (`xmpp.sessionSources`: a cluster peer's sessions), in registration order. Lookups are
 * asynchronous because a source may have to ask another node. Each answer is a snapshot: a session in it
 * may close while the caller awaits something else, so check `closed` before acting on one, and take one
 * snapshot where a decision needs a stable view. A source that fails is logged and counts as having no
 * sessions, so a peer that is down does not break what this node answers.
 */
export interface SessionDirectory {
  /** The session bound to this full JID (this node's first), or undefined. */
  get(full: string): Promise<C2SSession | undefined>;
  /** The sessions of an account (bare JID): this node's in binding order, then each source's. */
  byAccount(bare: string): Promise<C2SSession[]>;
  /**
   * `byAccount`'s answer without waiting, or undefined when a source can answer only asynchronously (a
   * cluster peer): for a check on every stanza that should not cost an async turn when it finds nothing to
   * do (does any session of the account want a copy?). Optional: ask `byAccount` when it is missing.
   */
  byAccountNow?(bare: string): C2SSession[] | undefined;
  /** The bare JIDs with at least one session, each once. */
  accounts(): Promise<string[]>;
  /** Every session: this node's, then each source's. */
  all(): Promise<C2SSession[]>;
  /** How many sessions there are (this node's plus what each source counts). */
  count(): Promise<number>;
  /** How many sessions accounts of this virtual host have. */
  countHost(host: string): Promise<number>;
}

/**
 * Sessions that are not this node's, as a module knows them (a cluster module: its peers' sessions),
 * registered in `xmpp.sessionSources` and merged into the directory while the module runs. It answers
 * the directory's questions for its sessions only: this node's are already there (a session whose full
 * JID is also bound here is left out of listings, this node's first, but counts are added as they are).
 * The sessions it returns are its own objects: what writing to one, or closing its outlet, does is up to
 * the source (forward it to the peer, say); this node runs no session hooks for them. The router
 * consults sources when it finds no session of this node for a full JID, and merges them into an account's
 * sessions for RFC 6121's delivery rules (highest priority across nodes): it runs the user_receive chain
 * here, then writes to the source's session, which forwards the stanza to the node that carries it.
 */
export interface SessionSource extends SessionDirectory {
  /**
   * `byAccount`'s answer without waiting, for a source that holds its sessions in memory (the other workers'
   * table): the router then delivers without an async turn per stanza. Optional; without it, the router awaits.
   */
  byAccountNow?(bare: string): C2SSession[];
}

/** Where stanzas go: to a local account or session, a component domain, or back to the sender as an error. */
export interface RouterApi {
  /** Whether `host` is one of this server's virtual hosts. */
  isLocalHost(host: string): boolean;
  /** Routes a stanza by its `to` (the server, an account, a session, a component); `session` is its sender's. */
  route(stanza: XmlElement, session?: C2SSession): Promise<void>;
  /** Delivers to one session through the user_receive chain. */
  deliverToSession(session: C2SSession, stanza: XmlElement): Promise<void>;
  /** Sends the error reply of `stanza` to its sender (never for an error stanza). */
  bounce(stanza: XmlElement, error: StanzaError): Promise<void>;
  /** Delivers to a local account (bare) or one of its resources (full) through the deliver chain. */
  deliverToAccount(stanza: XmlElement, from: Jid, to: Jid, session?: C2SSession): Promise<void>;
  /**
   * Routes a copy of `stanza` to each of `recipients` (full JIDs), as `route` would each with its `to` set:
   * the way to send one stanza to many (a group chat message to its occupants). The copies for sessions
   * another worker of this node carries travel to it together, once, and are routed there.
   */
  routeEach(stanza: XmlElement, recipients: readonly string[]): Promise<void>;
}

/**
 * How the copies of a routeEach reach another worker together (the workers' link gives it): which worker
 * carries a full JID, if another one does, and the sending of one stanza for several of its sessions
 * (false when that worker cannot be reached).
 */
export interface FanOutCarrier {
  workerOf(full: string): number | undefined;
  carry(worker: number, stanza: XmlElement, recipients: readonly string[]): boolean;
}

/** What service discovery announces: on `host` (per-host modules' entries included), or on every host. */
export interface DiscoApi {
  features(scope: DiscoScope, host?: string): string[];
  identities(scope: DiscoScope, host?: string): DiscoIdentity[];
}

export interface XmppApi {
  /** Every bound session: this node's and those of the registered session sources. */
  readonly sessions: SessionDirectory;
  readonly router: RouterApi;
  readonly disco: DiscoApi;
  /**
   * Whether a session is bound on this node's streams, not one a session source reports: for what only
   * the node carrying a session can do (pinging its client, resuming its stream).
   */
  isLocal(session: C2SSession): boolean;
  /**
   * Closes a session with a stream error that says why; resolves once every module has seen it end. A
   * session a source reports (another node's) is only closed through its outlet: its own node ends it.
   */
  kick(session: C2SSession, error: StreamError): Promise<void>;
  /** kick for every session of an account, this node's and the sources' (another node's); resolves with how many there were. */
  kickAccount(bare: string, error: StreamError): Promise<number>;
  /** Ends a session of this node whose stream is gone (a detached one whose time is up). */
  endSession(session: C2SSession): Promise<void>;
  /**
   * A session of this node leaves for another node (a cluster moves it there for a resumption): unless a
   * carrier refuses, its stream is closed with <conflict/>, it is unregistered without ending (no module
   * sees it close: no unavailable presence, nothing settled), and it is returned as it travels.
   */
  releaseSession(session: C2SSession): MovedSession | undefined;
  /**
   * The session of `account` with this id, brought here from the node that carries it by a session mover;
   * registered on this node, detached (no stream yet), every carrier's state restored, and announced with
   * c2s_session_moved_in. Undefined when no mover finds it.
   */
  moveSessionHere(account: string, id: string): Promise<C2SSession | undefined>;
}
