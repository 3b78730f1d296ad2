/**
 * Elements as stored text. An element taken out of a stanza may rely on namespaces declared by its
 * ancestors (or the stream header); the stored text declares whatever it needs itself, so that it parses
 * back alone to the same names and namespaces.
 * Modules that keep XML (offline messages, vCards, private storage) store and read it with these.
 */
import { XmlElement } from './element.js';
import { StreamParser, parseElement } from './stream-parser.js';

/** Stored elements passed the stream's limits when they arrived; reading them back needs no size limit. */
const STORED_LIMITS = { maxStanzaSize: Infinity, maxDepth: 64 };

export function toStoredXml(element: XmlElement): string {
  return selfContained(element, undefined, new Map()).toString();
}

/**
 * Reads stored elements one after another as children of one long-lived synthetic root: a parser costs more
 * to build than a stanza costs to parse, and a cluster node reads every stanza another node hands it this
 * way. Anything unusual (an XML declaration, an error, an unfinished element) drops the reader and goes to
 * parseElement, which says precisely what is wrong.
 */
interface StoredReader {
  readonly parser: StreamParser;
  readonly out: XmlElement[];
  failed: boolean;
}
let reader: StoredReader | undefined;

function storedReader(): StoredReader {
  if (reader) return reader;
  const out: XmlElement[] = [];
  const state: { failed: boolean } = { failed: false };
  const parser = new StreamParser(
    {
      streamStart: () => {},
      element: (element) => out.push(element),
      streamEnd: () => {},
      error: () => {
        state.failed = true;
      },
    },
    STORED_LIMITS,
  );
  parser.writeText('<root>');
  reader = Object.assign(state, { parser, out });
  return reader;
}

export function fromStoredXml(text: string): XmlElement {
  if (text.charCodeAt(0) === 60 /* < */ && text.charCodeAt(1) !== 63 /* ? */) {
    const current = storedReader();
    current.parser.writeText(text);
    if (!current.failed && current.out.length === 1 && current.parser.openElement === undefined) return current.out.pop()!;
    reader = undefined;
  }
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
