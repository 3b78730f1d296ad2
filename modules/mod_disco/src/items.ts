/**
 * disco#items of the server (XEP-0030 §4): what other modules list there (component domains such as a
 * conference service); and what modules answer about accounts (PEP nodes and their items, XEP-0163 §8),
 * asked after XEP-0030 §8's rule let the requester discover the account at all (handlers.ts).
 */
import { x, type Jid, type XmlElement } from '@service/plugin-api';
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

/** What a module answers about accounts' disco: the items at an account or at one of its nodes, and a node's info. */
export interface AccountDiscoProvider {
  /**
   * The items `requester` may see at the account's JID (`node` undefined) or at one of its nodes; undefined
   * when `node` is not this provider's. May throw a StanzaError (a node the requester may not read).
   */
  items(owner: Jid, requester: Jid, node: string | undefined): Promise<readonly DiscoItem[] | undefined>;
  /** The disco#info <query/> of one of the account's nodes; undefined when the node is not this provider's. */
  nodeInfo(owner: Jid, requester: Jid, node: string): Promise<XmlElement | undefined>;
}

export class AccountDisco {
  #providers: AccountDiscoProvider[] = [];

  /** Adds a provider; the returned function removes it (call it from the adding module's stop()). */
  add(provider: AccountDiscoProvider): () => void {
    this.#providers = [...this.#providers, provider];
    return () => {
      this.#providers = this.#providers.filter((p) => p !== provider);
    };
  }

  /** Every provider's items at the account; at a node, the answer of the provider whose node it is (undefined: nobody's). */
  async items(owner: Jid, requester: Jid, node: string | undefined): Promise<DiscoItem[] | undefined> {
    if (node === undefined) {
      const all: DiscoItem[] = [];
      for (const provider of this.#providers) all.push(...((await provider.items(owner, requester, undefined)) ?? []));
      return all;
    }
    for (const provider of this.#providers) {
      const items = await provider.items(owner, requester, node);
      if (items !== undefined) return [...items];
    }
    return undefined;
  }

  async nodeInfo(owner: Jid, requester: Jid, node: string): Promise<XmlElement | undefined> {
    for (const provider of this.#providers) {
      const info = await provider.nodeInfo(owner, requester, node);
      if (info !== undefined) return info;
    }
    return undefined;
  }
}

export function itemsQuery(items: readonly DiscoItem[], node?: string): XmlElement {
  return x('query', { xmlns: NS_DISCO_ITEMS, ...(node !== undefined ? { node } : {}) }, ...items.map((item) => x('item', { jid: item.jid, name: item.name, node: item.node })));
}
