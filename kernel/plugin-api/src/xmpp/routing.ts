/**
 * What a module can plug into routing: a component domain it serves (conference.example.org…), a route to
 * domains this server does not serve (another server, a cluster peer), and a keeper that decides whether a
 * session whose connection was lost lives on (stream management).
 */
import type { Jid } from '../jid/jid.js';
import type { XmlElement } from '../xml/element.js';
import type { C2SSession } from './session.js';

/** Takes every stanza addressed to a domain the module serves. */
export type DomainHandler = (stanza: XmlElement, from: Jid, to: Jid) => Promise<void> | void;

/** Decides, when a connection is lost without a proper close, whether the session lives on (detached). */
export type SessionKeeper = (session: C2SSession) => boolean;

/**
 * A way out for stanzas to a domain this server neither serves nor has a component for (s2s, a cluster
 * peer's components). Routes are tried in registration order; the first to take a stanza sends it on.
 */
export interface RemoteRoute {
  /** Sends the stanza on and resolves true, or resolves false when this route does not reach `to`. */
  route(stanza: XmlElement, from: Jid, to: Jid): Promise<boolean>;
}
