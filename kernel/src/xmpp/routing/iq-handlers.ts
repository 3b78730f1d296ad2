/**
 * The registered IQ handlers (the handler contract is the plugin API's), by payload namespace, type and
 * target, each tagged with the module that registered it.
 */
import type { IqHandler, IqHandlerRegistration, IqTarget, XmlElement } from '@service/plugin-api';

export class IqHandlers {
  readonly #handlers = new Map<string, Array<IqHandlerRegistration & { owner: string; host?: string }>>();

  /** `host`: the handler answers for that virtual host only (a per-host module's), else for every host. */
  register(registration: IqHandlerRegistration, owner: string, host?: string): void {
    const key = keyOf(registration.type, registration.ns, registration.to);
    const list = this.#handlers.get(key) ?? [];
    const clash = list.find((h) => h.name === registration.name && (h.host === undefined || host === undefined || h.host === host));
    if (clash) throw new Error(`an IQ ${registration.type} handler for ${registration.ns} (${registration.to}) is already registered by ${clash.owner}`);
    list.push({ ...registration, owner, ...(host ? { host } : {}) });
    this.#handlers.set(key, list);
  }

  removeOwner(owner: string): void {
    for (const [key, list] of this.#handlers) this.#handlers.set(key, list.filter((h) => h.owner !== owner));
  }

  /** The handler for an IQ to `host` (the server's domain, or the addressed account's). */
  find(type: string, payload: XmlElement, to: IqTarget, host: string): IqHandler | undefined {
    if (type !== 'get' && type !== 'set') return undefined;
    const list = this.#handlers.get(keyOf(type, payload.ns ?? '', to));
    return list?.find((h) => (h.name === undefined || h.name === payload.local) && (h.host === undefined || h.host === host))?.handler;
  }
}

function keyOf(type: string, ns: string, to: IqTarget): string {
  return `${type} ${to} ${ns}`;
}
