/**
 * Elements as stored text. An element taken out of a stanza may rely on namespaces declared by its
 * ancestors (or the stream header); the stored text declares whatever it needs itself, so that it parses
 * back alone to the same names and namespaces.
 * Modules that keep XML (offline messages, vCards, private storage) store and read it with these.
 */
import { XmlElement, escapeAttr, escapeText } from './element.js';
import { StreamParser, parseElement } from './stream-parser.js';

/** Stored elements passed the stream's limits when they arrived; reading them back needs no size limit. */
const STORED_LIMITS = { maxStanzaSize: Infinity, maxDepth: 64 };

export function toStoredXml(element: XmlElement): string {
  return storedText(element, undefined, NO_PREFIXES);
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

const NO_PREFIXES: ReadonlyMap<string, string> = new Map();

/**
 * The element as text that declares every namespace it relies on, written directly (no copy of the tree):
 * an element whose namespace differs from the default it inherits declares it, and a prefix not declared
 * in the text yet is declared where it is used.
 */
function storedText(element: XmlElement, inheritedDefault: string | undefined, inheritedPrefixes: ReadonlyMap<string, string>): string {
  const attrs = element.attrs;
  let prefixes = inheritedPrefixes;
  let out = `<${element.name}`;
  let declaresDefault = false;
  const colon = element.name.indexOf(':');
  for (const name in attrs) {
    let value = attrs[name]!;
    if (name === 'xmlns') {
      declaresDefault = true;
      // The element's own namespace wins over an xmlns attribute that says otherwise (as the copy did).
      if (colon === -1 && element.ns !== undefined) value = element.ns;
    } else if (name.startsWith('xmlns:')) {
      if (prefixes === inheritedPrefixes) prefixes = new Map(inheritedPrefixes);
      (prefixes as Map<string, string>).set(name.slice(6), value);
    }
    out += ` ${name}='${escapeAttr(value)}'`;
  }
  let defaultNs = declaresDefault ? (colon === -1 && element.ns !== undefined ? element.ns : attrs.xmlns) : inheritedDefault;
  if (colon === -1) {
    if (element.ns !== undefined && element.ns !== defaultNs) {
      // An xmlns attribute that disagrees with the element's namespace cannot be: the parser sets both.
      out += ` xmlns='${escapeAttr(element.ns)}'`;
      defaultNs = element.ns;
    }
  } else {
    const prefix = element.name.slice(0, colon);
    if (element.ns !== undefined && prefix !== 'xml' && !prefixes.has(prefix)) {
      out += ` xmlns:${prefix}='${escapeAttr(element.ns)}'`;
      if (prefixes === inheritedPrefixes) prefixes = new Map(inheritedPrefixes);
      (prefixes as Map<string, string>).set(prefix, element.ns);
    }
  }
  if (element.children.length === 0) return `${out}/>`;
  out += '>';
  for (const child of element.children) out += typeof child === 'string' ? escapeText(child) : storedText(child, defaultNs, prefixes);
  return `${out}</${element.name}>`;
}
