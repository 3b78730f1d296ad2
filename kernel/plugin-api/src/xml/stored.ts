/**
 * Elements as stored text. An element taken out of a stanza may rely on namespaces declared by its
 * ancestors (or the stream header); the stored text declares whatever it needs itself, so that it parses
 * back alone to the same names and namespaces.
 * Modules that keep XML (offline messages, vCards, private storage) store and read it with these.
 */
import { XmlElement } from './element.js';
import { parseElement } from './stream-parser.js';

/** Stored elements passed the stream's limits when they arrived; reading them back needs no size limit. */
const STORED_LIMITS = { maxStanzaSize: Infinity, maxDepth: 64 };

export function toStoredXml(element: XmlElement): string {
  return selfContained(element, undefined, new Map()).toString();
}

export function fromStoredXml(text: string): XmlElement {
  return parseElement(text, STORED_LIMITS);
}

function selfContained(element: XmlElement, inheritedDefault: string | undefined, inheritedPrefixes: ReadonlyMap<string, string>): XmlElement {
  const attrs = { ...element.attrs };
  const prefixes = new Map(inheritedPrefixes);
  for (const [name, value] of Object.entries(attrs)) if (name.startsWith('xmlns:')) prefixes.set(name.slice('xmlns:'.length), value);
  let defaultNs = attrs.xmlns ?? inheritedDefault;
  const colon = element.name.indexOf(':');
  if (colon === -1) {
    if (element.ns !== undefined && element.ns !== defaultNs) {
      attrs.xmlns = element.ns;
      defaultNs = element.ns;
    }
  } else {
    const prefix = element.name.slice(0, colon);
    if (element.ns !== undefined && prefix !== 'xml' && !prefixes.has(prefix)) {
      attrs[`xmlns:${prefix}`] = element.ns;
      prefixes.set(prefix, element.ns);
    }
  }
  const children = element.children.map((child) => (typeof child === 'string' ? child : selfContained(child, defaultNs, prefixes)));
  return new XmlElement(element.name, attrs, children, element.ns);
}
