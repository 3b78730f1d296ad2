/**
 * The parts of a pubsub request that PEP (pep-iq.ts) and the pubsub service (service-dispatch.ts) read
 * alike: the node a verb names, an item's id, and what an <items/> retrieval asks for (XEP-0060 §6.5:
 * named items, or the newest `max_items`, or all).
 */
import { StanzaError, type XmlElement } from '@service/plugin-api';
import { pubsubError } from './errors.js';
import { keyName } from './names.js';

export function nodeOf(verb: XmlElement): string {
  const node = verb.attr('node');
  if (!node) throw pubsubError('bad-request', 'nodeid-required', 'the request names its node');
  return keyName('node', node);
}

export function itemIdOf(item: XmlElement | undefined): string | undefined {
  const id = item?.attr('id');
  return id ? keyName('item id', id) : undefined;
}

/** The node of an <items/> retrieval and which of its items it asks for. */
export function itemsRequest(verb: XmlElement): { node: string; options: { ids?: string[]; max?: number } } {
  const node = nodeOf(verb);
  const ids = verb
    .getChildren('item')
    .map((i) => i.attr('id'))
    .filter((id): id is string => !!id);
  const maxText = verb.attr('max_items');
  if (maxText !== undefined && !/^\d+$/.test(maxText)) throw new StanzaError('bad-request', 'max_items is a non-negative integer');
  return { node, options: ids.length ? { ids } : maxText !== undefined ? { max: Number(maxText) } : {} };
}
