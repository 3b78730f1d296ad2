/**
 * An XML element as stanzas are handled: a qualified name, attributes (namespace declarations included,
 * as written) and children, with its resolved namespace. Small on purpose: stanzas are built, inspected,
 * and written, never queried with XPath.
 */

export type XmlNode = XmlElement | string;

export class XmlElement {
  /** The resolved namespace URI (from the parser, or from `xmlns` / the parent when built in code). */
  ns: string | undefined;

  constructor(
    public name: string,
    public attrs: Record<string, string> = {},
    public children: XmlNode[] = [],
    ns?: string,
  ) {
    this.ns = ns ?? attrs.xmlns;
    for (const child of children) if (child instanceof XmlElement) child.ns ??= this.ns;
  }

  /** The local name (without prefix). */
  get local(): string {
    const colon = this.name.indexOf(':');
    return colon === -1 ? this.name : this.name.slice(colon + 1);
  }

  attr(name: string): string | undefined {
    return this.attrs[name];
  }

  setAttr(name: string, value: string | undefined): this {
    if (value === undefined) delete this.attrs[name];
    else this.attrs[name] = value;
    return this;
  }

  is(name: string, ns?: string): boolean {
    return this.local === name && (ns === undefined || this.ns === ns);
  }

  append(...children: Array<XmlNode | undefined | false | null>): this {
    for (const child of children) {
      if (child === undefined || child === false || child === null) continue;
      if (child instanceof XmlElement) child.ns ??= this.ns;
      this.children.push(child);
    }
    return this;
  }

  elements(): XmlElement[] {
    return this.children.filter((c): c is XmlElement => c instanceof XmlElement);
  }

  getChild(name: string, ns?: string): XmlElement | undefined {
    for (const child of this.children) if (child instanceof XmlElement && child.is(name, ns)) return child;
    return undefined;
  }

  getChildren(name: string, ns?: string): XmlElement[] {
    return this.elements().filter((c) => c.is(name, ns));
  }

  /** The first child element in a namespace, whatever its name (an IQ's payload, a query). */
  getChildByNs(ns: string): XmlElement | undefined {
    return this.elements().find((c) => c.ns === ns);
  }

  /** Concatenated text of the direct text children. */
  text(): string {
    let out = '';
    for (const child of this.children) if (typeof child === 'string') out += child;
    return out;
  }

  getChildText(name: string, ns?: string): string | undefined {
    return this.getChild(name, ns)?.text();
  }

  removeChildren(predicate: (child: XmlElement) => boolean): this {
    this.children = this.children.filter((c) => !(c instanceof XmlElement) || !predicate(c));
    return this;
  }

  clone(): XmlElement {
    return new XmlElement(
      this.name,
      { ...this.attrs },
      this.children.map((c) => (c instanceof XmlElement ? c.clone() : c)),
      this.ns,
    );
  }

  toString(): string {
    return serialize(this);
  }
}

/** Builds an element: `x('iq', {type: 'result', id}, x('query', {xmlns: NS}))`; undefined attributes are left out. */
export function x(name: string, attrs: Record<string, string | number | undefined> = {}, ...children: Array<XmlNode | undefined | false | null>): XmlElement {
  const clean: Record<string, string> = {};
  for (const [key, value] of Object.entries(attrs)) if (value !== undefined) clean[key] = String(value);
  return new XmlElement(name, clean).append(...children);
}

const TEXT_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const ATTR_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', "'": '&apos;', '"': '&quot;' };

export function escapeText(text: string): string {
  return text.replace(/[&<>]/g, (c) => TEXT_ESCAPES[c]!);
}

export function escapeAttr(text: string): string {
  return text.replace(/[&<>'"]/g, (c) => ATTR_ESCAPES[c]!);
}

export function serialize(element: XmlElement): string {
  let out = `<${element.name}`;
  for (const [name, value] of Object.entries(element.attrs)) out += ` ${name}='${escapeAttr(value)}'`;
  if (element.children.length === 0) return `${out}/>`;
  out += '>';
  for (const child of element.children) out += typeof child === 'string' ? escapeText(child) : serialize(child);
  return `${out}</${element.name}>`;
}
