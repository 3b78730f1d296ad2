/**
 * IQ handlers by payload namespace, type and target: the server itself (`to` its domain) or an account (`to`
 * a bare JID, or no `to`: the sender's own account, RFC 6120 §10.3.3). A handler returns the result payload
 * (or nothing for an empty result) or throws a StanzaError; an IQ nobody handles is answered with
 * <service-unavailable/>.
 */
import type { Jid } from '../jid/jid.js';
import type { XmlElement } from '../xml/element.js';
import type { C2SSession } from './session.js';

export type IqTarget = 'server' | 'account';

export interface IqContext {
  readonly stanza: XmlElement;
  /** The first child element: the query. */
  readonly payload: XmlElement;
  readonly from: Jid;
  /** The server's domain, or the bare JID of the account addressed. */
  readonly to: Jid;
  /** The sender addresses its own account. */
  readonly self: boolean;
  /** The sender's session, when it is a local client. */
  readonly session?: C2SSession;
}

export type IqHandler = (ctx: IqContext) => Promise<XmlElement | void> | XmlElement | void;

export interface IqHandlerRegistration {
  readonly type: 'get' | 'set';
  /** Namespace of the payload element. */
  readonly ns: string;
  /** Restricts to one payload element name (for namespaces shared by several, like XEP-0191). */
  readonly name?: string;
  readonly to: IqTarget;
  readonly handler: IqHandler;
}
