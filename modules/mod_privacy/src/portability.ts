/**
 * mod_privacy's part of XEP-0227 exports and imports: an account's privacy lists (XEP-0016) as one
 * `<query xmlns='jabber:iq:privacy'>` with `<default name=…/>` and every `<list>`, checked on import as a
 * client's list is (XEP-0016 §2.1). An empty list, which is never stored, is left out.
 */
import { Jid, PortabilityError, StanzaError, x, type AccountPortability, type XmlElement } from '@service/plugin-api';
import { listElement, parseList, queryElement } from './list-xml.js';
import type { PrivacyList } from './model.js';
import { NS_PRIVACY } from './ns.js';
import type { PrivacyStore } from './store.js';

interface Imported {
  readonly lists: PrivacyList[];
  readonly defaultName: string | undefined;
}

function importedOf(queries: readonly XmlElement[]): Imported {
  const lists = new Map<string, PrivacyList>();
  let defaultName: string | undefined;
  try {
    for (const query of queries) {
      for (const element of query.elements()) {
        if (element.local === 'default') {
          defaultName = element.attr('name') || undefined;
        } else if (element.local === 'list') {
          const list = parseList(element);
          if (lists.has(list.name)) throw new PortabilityError(`privacy: the list '${list.name}' appears twice`);
          if (list.items.length) lists.set(list.name, list);
        } else if (element.local !== 'active') {
          // <active/> belongs to a session, which an import has none of.
          throw new PortabilityError(`privacy: unexpected <${element.local}/> (only <list/>, <default/>, <active/>)`);
        }
      }
    }
  } catch (err) {
    if (err instanceof StanzaError) throw new PortabilityError(`privacy: ${err.message}`);
    throw err;
  }
  if (defaultName !== undefined && !lists.has(defaultName)) throw new PortabilityError(`privacy: the default list '${defaultName}' is not among the lists`);
  return { lists: [...lists.values()], defaultName };
}

export function privacyPortability(store: PrivacyStore): AccountPortability {
  const accountOf = (user: string, host: string) => new Jid(user, host, undefined);
  return {
    kind: 'privacy',
    claims: [{ name: 'query', ns: NS_PRIVACY }],
    async exportAccount(user, host) {
      const state = await store.account(accountOf(user, host));
      if (!state.lists.size) return [];
      const lists = [...state.lists.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return [queryElement(...(state.defaultName !== undefined ? [x('default', { name: state.defaultName })] : []), ...lists.map(listElement))];
    },
    checkAccount(_user, _host, elements) {
      importedOf(elements);
    },
    async importAccount(user, host, elements) {
      const { lists, defaultName } = importedOf(elements);
      const account = accountOf(user, host);
      for (const list of lists) await store.saveList(account, list);
      if (defaultName !== undefined) await store.setDefault(account, defaultName);
      return lists.length;
    },
  };
}
