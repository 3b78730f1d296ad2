/**
 * The XMPP side of the server as modules use it: the directory of bound sessions, the router, what service
 * discovery announces, and the end of sessions. Modules register IQ handlers, middleware, features, disco
 * entries, SASL mechanisms and domains through their instance (see ModuleInstance.xmpp), not here.
 */
import type { Jid } from '../jid/jid.js';
import type { XmlElement } from '../xml/element.js';
import type { DiscoIdentity, DiscoScope } from '../xmpp/disco.js';
import type { StanzaError, StreamError } from '../xmpp/errors.js';
import type { C2SSession } from '../xmpp/session.js';

/** Every bound session, by full JID and by account. */
export interface SessionDirectory {
  get(full: string): C2SSession | undefined;
  /** The sessions of an account (bare JID), in binding order. */
  byAccount(bare: string): C2SSession[];
  /** The bare JIDs with at least one session. */
  accounts(): IterableIterator<string>;
  all(): IterableIterator<C2SSession>;
  readonly count: number;
  countHost(host: string): number;
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
}

export interface DiscoApi {
  features(scope: DiscoScope): string[];
  identities(scope: DiscoScope): DiscoIdentity[];
}

export interface XmppApi {
  readonly sessions: SessionDirectory;
  readonly router: RouterApi;
  readonly disco: DiscoApi;
  /** Closes a session with a stream error that says why; resolves once every module has seen it end. */
  kick(session: C2SSession, error: StreamError): Promise<void>;
  /** kick for every session of an account; resolves with how many there were. */
  kickAccount(bare: string, error: StreamError): Promise<number>;
  /** Ends a session whose stream is gone (a detached one whose time is up). */
  endSession(session: C2SSession): Promise<void>;
}
