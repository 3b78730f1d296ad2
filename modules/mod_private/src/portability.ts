/**
 * mod_private's part of XEP-0227 exports and imports: an account's private XML storage (XEP-0049) as one
 * `<query xmlns='jabber:iq:private'>` holding every stored element, whatever its namespace (those the
 * server keeps for itself, such as ban details, included, so that an import restores them).
 */
import { PortabilityError, accountKey, x, type AccountPortability, type XmlElement } from '@service/plugin-api';
import { MAX_NAMESPACE_LENGTH } from './migrations.js';
import { NS_PRIVATE } from './namespaces.js';
import type { PrivateStore } from './store.js';

const REFUSED = new Set(['jabber:client', 'jabber:server', 'jabber:component:accept', NS_PRIVATE]);

/** The stored elements of the queries, one per namespace; a PortabilityError names a bad one. */
function elementsOf(queries: readonly XmlElement[]): XmlElement[] {
  const byNs = new Map<string, XmlElement>();
  for (const query of queries) {
    for (const element of query.elements()) {
      const ns = element.ns;
      if (!ns) throw new PortabilityError(`private: <${element.local}/> has no namespace of its own`);
      if (REFUSED.has(ns)) throw new PortabilityError(`private: the namespace ${ns} cannot be stored`);
      if ([...ns].length > MAX_NAMESPACE_LENGTH) throw new PortabilityError(`private: namespaces longer than ${MAX_NAMESPACE_LENGTH} characters are not stored`);
      if (byNs.has(ns)) throw new PortabilityError(`private: the namespace ${ns} appears twice`);
      byNs.set(ns, element);
    }
  }
  return [...byNs.values()];
}

export function privatePortability(store: PrivateStore): AccountPortability {
  return {
    kind: 'private',
    claims: [{ name: 'query', ns: NS_PRIVATE }],
    async exportAccount(user, host) {
      const account = accountKey(user, host);
      const elements: XmlElement[] = [];
      for (const ns of await store.namespaces(account)) {
        const element = await store.get(account, ns);
        if (element) elements.push(element);
      }
      return elements.length ? [x('query', { xmlns: NS_PRIVATE }, ...elements)] : [];
    },
    checkAccount(_user, _host, elements) {
      elementsOf(elements);
    },
    async importAccount(user, host, elements) {
      const stored = elementsOf(elements);
      if (stored.length) await store.set(accountKey(user, host), stored);
      return stored.length;
    },
  };
}
