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
class StoredReader {
  readonly out: XmlElement[] = [];
  failed = false;
  readonly parser = new StreamParser(
    {
      streamStart: () => {},
      element: (element) => this.out.push(element),
      streamEnd: () => {},
      error: () => {
        this.failed = true;
      },
    },
    STORED_LIMITS,
  );

  constructor() {
    this.parser.writeText('<root>');
  }
}
let reader: StoredReader | undefined;

export function fromStoredXml(text: string): XmlElement {
  if (text.charCodeAt(0) === 60 /* < */ && text.charCodeAt(1) !== 63 /* ? */) {
    const current = (reader ??= new StoredReader());
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
  const colon = element.name.indexOf(':');
  let prefixes = inheritedPrefixes;
  /** The prefixes in scope here, copied from the parent's the first time this element declares one. */
  const declare = (prefix: string, ns: string) => {
    if (prefixes === inheritedPrefixes) prefixes = new Map(inheritedPrefixes);
    (prefixes as Map<string, string>).set(prefix, ns);
  };
  let out = `<${element.name}`;
  let defaultNs = inheritedDefault;
  let declaresDefault = false;
  for (const name in attrs) {
    let value = attrs[name]!;
    if (name === 'xmlns') {
      // The element's own namespace wins over an xmlns attribute that says otherwise (as a copy would).
      if (colon === -1 && element.ns !== undefined) value = element.ns;
      declaresDefault = true;
      defaultNs = value;
    } else if (name.startsWith('xmlns:')) declare(name.slice(6), value);
    out += ` ${name}='${escapeAttr(value)}'`;
  }
  if (colon === -1) {
    // No xmlns attribute, and a namespace other than the one inherited: declared here.
    if (!declaresDefault && element.ns !== undefined && element.ns !== defaultNs) {
      out += ` xmlns='${escapeAttr(element.ns)}'`;
      defaultNs = element.ns;
    }
  } else {
    const prefix = element.name.slice(0, colon);
    if (element.ns !== undefined && prefix !== 'xml' && !prefixes.has(prefix)) {
      out += ` xmlns:${prefix}='${escapeAttr(element.ns)}'`;
      declare(prefix, element.ns);
    }
  }
  if (element.children.length === 0) return `${out}/>`;
  out += '>';
  for (const child of element.children) out += typeof child === 'string' ? escapeText(child) : storedText(child, defaultNs, prefixes);
  return `${out}</${element.name}>`;
}
