/**
 * IQ handlers by payload namespace, type and target: the server itself (`to` its domain) or an account
 * (`to` a bare JID, or no `to`: the sender's own account, RFC 6120 §10.3.3). A handler returns the result
 * payload (or nothing for an empty result) or throws a StanzaError; an IQ nobody handles is answered
 * with <service-unavailable/>.
 */
import type { Jid } from '../jid.js';
import type { C2SSession } from '../sm/session.js';
import type { XmlElement } from '../xml/element.js';

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

export class IqHandlers {
  readonly #handlers = new Map<string, Array<IqHandlerRegistration & { owner: string }>>();

  register(registration: IqHandlerRegistration, owner: string): void {
    const key = keyOf(registration.type, registration.ns, registration.to);
    const list = this.#handlers.get(key) ?? [];
    const clash = list.find((h) => h.name === registration.name);
    if (clash) throw new Error(`an IQ ${registration.type} handler for ${registration.ns} (${registration.to}) is already registered by ${clash.owner}`);
    list.push({ ...registration, owner });
    this.#handlers.set(key, list);
  }

  removeOwner(owner: string): void {
    for (const [key, list] of this.#handlers) this.#handlers.set(key, list.filter((h) => h.owner !== owner));
  }

  find(type: string, payload: XmlElement, to: IqTarget): IqHandler | undefined {
    if (type !== 'get' && type !== 'set') return undefined;
    const list = this.#handlers.get(keyOf(type, payload.ns ?? '', to));
    return list?.find((h) => h.name === undefined || h.name === payload.local)?.handler;
  }
}

function keyOf(type: string, ns: string, to: IqTarget): string {
  return `${type} ${to} ${ns}`;
}
