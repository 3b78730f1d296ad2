/**
 * disco#items of the server (XEP-0030 §4): what other modules list there (component domains such as a
 * conference service). Accounts have no items here (PEP nodes would be a module of their own).
 */
import { x, type XmlElement } from '@service/plugin-api';
import { NS_DISCO_ITEMS } from './ns.js';

export interface DiscoItem {
  readonly jid: string;
  readonly name?: string;
  readonly node?: string;
}

/** Lists items for one virtual host. */
export type DiscoItemsProvider = (host: string) => readonly DiscoItem[];

export class ServerItems {
  #providers: DiscoItemsProvider[] = [];

  /** Adds a provider; the returned function removes it (call it from the adding module's stop()). */
  add(provider: DiscoItemsProvider): () => void {
    this.#providers = [...this.#providers, provider];
    return () => {
      this.#providers = this.#providers.filter((p) => p !== provider);
    };
  }

  of(host: string): DiscoItem[] {
    return this.#providers.flatMap((provider) => provider(host));
  }
}

export function itemsQuery(items: readonly DiscoItem[]): XmlElement {
  return x('query', { xmlns: NS_DISCO_ITEMS }, ...items.map((item) => x('item', { jid: item.jid, name: item.name, node: item.node })));
}
