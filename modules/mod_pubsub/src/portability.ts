/**
 * mod_pubsub's part of XEP-0227 exports and imports: an account's PEP nodes (its service is its bare JID), as
 * XEP-0227 1.1 writes them — `<pubsub xmlns='…#owner'>` with a `<configure node=…>` node configuration form
 * per node, and `<pubsub xmlns='…pubsub'>` with the `<items node=…>` of each, oldest first, each `<item>`
 * with its `publisher`. On import the forms are applied over the PEP defaults as a client's configuration
 * would be (the module's max_items_node applies), and the items are stored in their order.
 */
import { PortabilityError, StanzaError, x, type AccountPortability, type XmlElement } from '@service/plugin-api';
import { applyFields, configForm, defaultPepConfig, formFields, type ConfigLimits, type NodeConfig } from './node-config.js';
import { NS_PUBSUB, NS_PUBSUB_NODE_CONFIG, NS_PUBSUB_OWNER } from './ns.js';
import type { PubsubStore } from './store.js';

/** The width of the node and item id columns (migrations.ts). */
const MAX_KEY_LENGTH = 191;

interface ImportedNode {
  readonly node: string;
  readonly config: NodeConfig;
  readonly items: Array<{ id: string; publisher: string; item: XmlElement }>;
}

/** The configuration form of a node as a submitted form: its fields and values only. */
function submitForm(config: NodeConfig): XmlElement {
  const form = configForm(config);
  return x('x', { xmlns: form.attr('xmlns'), type: 'submit' }, ...form.getChildren('field').map((f) => x('field', { var: f.attr('var') }, ...f.getChildren('value').map((v) => x('value', {}, v.text())))));
}

/** A stored item as exported: in the pubsub namespace of its parent (however it was stored), with its publisher. */
function itemOf(stored: XmlElement, publisher: string): XmlElement {
  const item = stored.clone().setAttr('xmlns', undefined).setAttr('publisher', publisher);
  item.ns = NS_PUBSUB;
  return item;
}

function nodesOf(owner: string, elements: readonly XmlElement[], limits: ConfigLimits): ImportedNode[] {
  const nodes = new Map<string, { config: NodeConfig; items: ImportedNode['items'] }>();
  const nodeOf = (name: string | undefined, where: string) => {
    if (!name) throw new PortabilityError(`pep: <${where}> has no node`);
    if ([...name].length > MAX_KEY_LENGTH) throw new PortabilityError(`pep: node names have at most ${MAX_KEY_LENGTH} characters`);
    let node = nodes.get(name);
    if (!node) nodes.set(name, (node = { config: defaultPepConfig(), items: [] }));
    return node;
  };
  try {
    for (const pubsub of elements) {
      for (const child of pubsub.elements()) {
        if (pubsub.ns === NS_PUBSUB_OWNER && child.local === 'configure') {
          const node = nodeOf(child.attr('node'), 'configure');
          const form = child.getChild('x');
          if (form) node.config = applyFields(defaultPepConfig(), formFields(form, NS_PUBSUB_NODE_CONFIG), limits);
        } else if (pubsub.ns === NS_PUBSUB && child.local === 'items') {
          const node = nodeOf(child.attr('node'), 'items');
          for (const item of child.elements()) {
            const id = item.attr('id');
            if (item.local !== 'item' || !id) throw new PortabilityError(`pep: the node ${child.attr('node')} has an <${item.local}/> without an id`);
            if ([...id].length > MAX_KEY_LENGTH) throw new PortabilityError(`pep: item ids have at most ${MAX_KEY_LENGTH} characters`);
            const stored = item.clone();
            stored.setAttr('publisher', undefined);
            node.items.push({ id, publisher: item.attr('publisher') || owner, item: stored });
          }
        } else {
          throw new PortabilityError(`pep: unexpected <${child.local}/> in <pubsub xmlns='${pubsub.ns}'>`);
        }
      }
    }
  } catch (err) {
    if (err instanceof StanzaError) throw new PortabilityError(`pep: ${err.message}`);
    throw err;
  }
  return [...nodes].map(([node, { config, items }]) => ({ node, config, items }));
}

export function pepPortability(store: PubsubStore, limits: () => ConfigLimits): AccountPortability {
  return {
    kind: 'pep',
    claims: [
      { name: 'pubsub', ns: NS_PUBSUB_OWNER },
      { name: 'pubsub', ns: NS_PUBSUB },
    ],
    async exportAccount(user, host) {
      const nodes = await store.nodes(`${user}@${host}`);
      if (!nodes.length) return [];
      const items: XmlElement[] = [];
      for (const node of nodes) {
        const stored = (await store.items(node.id)).reverse();
        if (!stored.length) continue;
        items.push(x('items', { node: node.node }, ...stored.map((s) => itemOf(s.item, s.publisher))));
      }
      return [
        x('pubsub', { xmlns: NS_PUBSUB_OWNER }, ...nodes.map((node) => x('configure', { node: node.node }, submitForm(node.config)))),
        ...(items.length ? [x('pubsub', { xmlns: NS_PUBSUB }, ...items)] : []),
      ];
    },
    checkAccount(user, host, elements) {
      nodesOf(`${user}@${host}`, elements, limits());
    },
    async importAccount(user, host, elements) {
      const owner = `${user}@${host}`;
      const nodes = nodesOf(owner, elements, limits());
      let count = 0;
      for (const { node, config, items } of nodes) {
        const now = Date.now();
        const { node: stored } = await store.ensure(owner, node, config, now);
        // Oldest first, a millisecond apart, so that "newest" still means what it meant.
        for (const [i, { id, publisher, item }] of items.entries()) await store.publish(stored.id, id, publisher, item, config.maxItems, now - items.length + i);
        count += 1;
      }
      return count;
    },
  };
}
