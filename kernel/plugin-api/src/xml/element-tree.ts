/**
 * An element as it travels between the processes of one machine (the workers' link, a module's channel):
 * its tree as JSON arrays, not XML text. The message carrying it is JSON already, so the receiver gets the
 * element back with the JSON.parse it does anyway and no XML parser pass (parsing the text again was the
 * largest cost of a stanza handed to another worker). Each element keeps its resolved namespace, so nothing
 * depends on where it is re-rooted. Across machines (mod_cluster) stanzas stay stored XML: that format is
 * also what the database keeps.
 */
import { XmlElement } from './element.js';

/** name, attributes, children (text or elements), resolved namespace. */
export type ElementTree = [name: string, attrs: Record<string, string>, children: Array<string | ElementTree>, ns?: string];

export function treeOf(element: XmlElement): ElementTree {
  const children: Array<string | ElementTree> = [];
  for (const child of element.children) children.push(typeof child === 'string' ? child : treeOf(child));
  return element.ns === undefined ? [element.name, element.attrs, children] : [element.name, element.attrs, children, element.ns];
}

/** The element of a tree another worker sent; throws on anything that is not one (a worker's bug, not input). */
export function elementOf(tree: ElementTree): XmlElement {
  const [name, attrs, children, ns] = tree;
  if (typeof name !== 'string' || typeof attrs !== 'object' || attrs === null || !Array.isArray(children)) throw new Error('not an element tree');
  return new XmlElement(name, attrs, children.map((child) => (typeof child === 'string' ? child : elementOf(child))), ns);
}
