/**
 * Which elements private storage accepts (XEP-0049): a root element in a namespace of its own — not the
 * stanza namespaces, not jabber:iq:private itself (an element without xmlns inside the query inherits it).
 */
import type { XmlElement } from '@service/plugin-api';
import { MAX_NAMESPACE_LENGTH } from './migrations.js';

export const NS_PRIVATE = 'jabber:iq:private';

const RESERVED = new Set(['jabber:client', 'jabber:server', 'jabber:component:accept', NS_PRIVATE]);

/**
 * Which namespaces are open to the account (its clients, private_get/private_set): all but the stanza
 * namespaces and those a module has claimed for the server (ban details), which only that module's handle
 * reads and writes — an account must not lift its own ban by editing its private storage.
 */
export class NamespacePolicy {
  readonly #claimed = new Set<string>();

  claim(ns: string): void {
    if (this.#claimed.has(ns)) throw new Error(`the private storage namespace ${ns} is already claimed`);
    this.#claimed.add(ns);
  }

  release(ns: string): void {
    this.#claimed.delete(ns);
  }

  /** Why the element cannot be stored or asked for by the account, or undefined when it can. */
  problem(element: XmlElement): string | undefined {
    const ns = element.ns;
    if (!ns) return `<${element.local}/> has no namespace of its own`;
    if (RESERVED.has(ns)) return `the namespace ${ns} is reserved`;
    if (this.#claimed.has(ns)) return `the namespace ${ns} is kept by the server`;
    if ([...ns].length > MAX_NAMESPACE_LENGTH) return `namespaces longer than ${MAX_NAMESPACE_LENGTH} characters are not stored`;
    return undefined;
  }
}
