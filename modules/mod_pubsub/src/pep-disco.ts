/**
 * PEP in service discovery (XEP-0163 §8, XEP-0060 §5.2–5.5): disco#items at an account's bare JID lists
 * the PEP nodes the requester may read, disco#items at one of its nodes lists the node's item ids, and
 * disco#info at a node says it is a leaf node. mod_disco asks this only for requesters that XEP-0030 §8
 * lets discover the account; the access models then decide node by node, as for retrieving items.
 */
import { x, type Jid, type XmlElement } from '@service/plugin-api';
import type { AccountDiscoProvider, DiscoItem } from '@service/mod_disco/api';
import { accessRefusal } from './access.js';
import { NS_DISCO_INFO, NS_PUBSUB } from './ns.js';
import type { Pep } from './pep.js';

export function pepDisco(pep: Pep): AccountDiscoProvider {
  return {
    async items(owner: Jid, requester: Jid, node: string | undefined): Promise<DiscoItem[] | undefined> {
      if (node === undefined) {
        const roster = pep.rosterView();
        const visible: DiscoItem[] = [];
        for (const stored of await pep.nodes(owner)) {
          if (!(await accessRefusal(stored.config, owner, requester, roster))) visible.push({ jid: owner.bare, node: stored.node, name: stored.config.title || undefined });
        }
        return visible;
      }
      if (!(await pep.hasNode(owner, node))) return undefined;
      const { items } = await pep.items(owner, requester, node, {});
      return items.map((item) => ({ jid: owner.bare, name: item.itemId }));
    },
    async nodeInfo(owner: Jid, requester: Jid, node: string): Promise<XmlElement | undefined> {
      if (!(await pep.hasNode(owner, node))) return undefined;
      const found = await pep.requireNode(owner, node);
      const refusal = await accessRefusal(found.config, owner, requester, pep.rosterView());
      if (refusal) throw refusal;
      return x('query', { xmlns: NS_DISCO_INFO, node }, x('identity', { category: 'pubsub', type: 'leaf' }), x('feature', { var: NS_PUBSUB }));
    },
  };
}
