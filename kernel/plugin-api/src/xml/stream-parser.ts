/**
 * The XMPP framing layer over saxes: bytes in, the stream header, each top-level element (stanzas and
 * stream-level elements), and the stream end out. It enforces RFC 6120 §11's restrictions and the
 * server's limits, and reports the first violation as the stream error condition it calls for; after
 * that it ignores input. A stream restart needs a new parser.
 *
 *   invalid UTF-8, malformed XML, text between stanzas  → not-well-formed
 *   DTD, comment, processing instruction, CDATA between stanzas, an entity other than the five predefined
 *   ones → restricted-xml
 *   more than max_stanza_size bytes since the end of the previous stanza (the stanza, its start tag, or
 *   anything between stanzas), nesting deeper than maxDepth → policy-violation
 *
 * Every byte counts against the limit until a top-level element completes, so nothing — a giant start tag,
 * an endless comment, text that never meets a '<' — can make the parser hold more than max_stanza_size.
 * Between stanzas the input is also checked as it arrives, not when saxes would report it (at the next
 * '<' or the end of a comment): text or '<!'/'<?' there is an error at once.
 */
import type { SaxesParser, SaxesTagNS } from 'saxes';
import { FastSaxesParser } from './saxes-parser.js';
import { XmlElement, escapeAttr } from './element.js';
import { ReferenceGuard } from './reference-guard.js';

export type ParseErrorCondition = 'not-well-formed' | 'restricted-xml' | 'policy-violation';

export interface StreamParserLimits {
  /** Bytes of one top-level element; Infinity for none. */
  readonly maxStanzaSize: number;
  /** Element nesting below the stream root. */
  readonly maxDepth: number;
}

export interface StreamParserHandlers {
  /** The root element opened: `<stream:stream …>` (or anything else, for the caller to refuse). */
  streamStart(name: string, attrs: Record<string, string>, ns: string | undefined): void;
  element(element: XmlElement): void;
  streamEnd(): void;
  error(condition: ParseErrorCondition, text: string): void;
}

/** Thrown through saxes to abandon the rest of a chunk once the stream has failed. */
const STOP = Symbol('stop parsing');

const DTD_REFUSED = 'a document type declaration (DTD, where entities are defined) is not allowed';
const ENTITY_REFUSED = 'a reference to an undefined entity: only &lt; &gt; &amp; &quot; &apos; and character references are allowed';

export const DEFAULT_LIMITS: StreamParserLimits = { maxStanzaSize: 262144, maxDepth: 64 };

export interface StreamParserOptions {
  /**
   * After a top-level element for which this returns true, the parser stops and keeps the rest of the input
   * (`takeHeld`): what follows may belong to a restarted stream (pipelined after SASL), which needs a new
   * parser.
   */
  readonly holdAfter?: (element: XmlElement) => boolean;
  /** Continue a stream whose header another parser already read: no header expected, none reported. */
  readonly continued?: boolean;
  /**
   * A continued stream's namespace declarations (`xmlns`, `xmlns:*` of the header the other parser read), so
   * that the prefixes a client declared there still resolve; jabber:client and the stream prefix by default.
   */
  readonly declarations?: Readonly<Record<string, string>>;
}

/** The namespace declarations among a stream header's attributes (what a continued parser must know). */
export function namespaceDeclarations(attrs: Readonly<Record<string, string>>): Record<string, string> {
  const declarations: Record<string, string> = {};
  for (const [name, value] of Object.entries(attrs)) if (name === 'xmlns' || name.startsWith('xmlns:')) declarations[name] = value;
  return declarations;
}

const DEFAULT_DECLARATIONS: Readonly<Record<string, string>> = { xmlns: 'jabber:client', 'xmlns:stream': 'http://etherx.jabber.org/streams' };

export class StreamParser {
  readonly #parser: SaxesParser<{ xmlns: true; position: true }>;
  /** Made by the first `write` of bytes: transports that decode for themselves feed text and need none. */
  #decoder: InstanceType<typeof TextDecoder> | undefined;
  readonly #references = new ReferenceGuard();
  /** The chunk being parsed and the character offset where it starts, to size a stanza that ends in it. */
  #chunk = '';
  #chunkStart = 0;
  /** Open elements below the root; [0] is the top-level element being built. */
  readonly #stack: XmlElement[] = [];
  #rootOpen = false;
  #failed = false;
  /** Document offset (characters) of the last boundary: the end of the stream header or of a top-level element. */
  #boundary = 0;
  /** UTF-8 bytes from the boundary to the start of the chunk being parsed. */
  #pendingBytes = 0;
  /** Between stanzas: only whitespace seen since the boundary, a '<' or '<!' just seen, or a tag under way. */
  #gap: 'space' | 'lt' | 'bang' | 'tag' = 'space';
  /** Input held after a holdAfter element; undefined while parsing normally. */
  #held: string | undefined;
  #heldFrom = 0;
  /** A continued stream: its synthetic header is not reported. */
  #suppressStart = false;
  /** Inside saxes' write: a failure may unwind it (see #fail). */
  #writing = false;
  /** Something other than whitespace reached saxes (the document has started). */
  #started = false;

  constructor(
    private readonly handlers: StreamParserHandlers,
    private readonly limits: StreamParserLimits = DEFAULT_LIMITS,
    private readonly options: StreamParserOptions = {},
  ) {
    const parser = new FastSaxesParser({ xmlns: true, position: true });
    this.#parser = parser;
    parser.on('error', (err) => {
      // saxes starts its messages with a position ("1:15: "), counted in what it was given: a synthetic stream
      // header or root element comes first (parseElement, continued streams), so it is not the sender's.
      const message = err.message.replace(/^(?:[^:\s]*:)?\d+:\d+: /, '').replace(/\.$/, '');
      // A DOCTYPE anywhere (saxes calls one inside the stream "inappropriately located") is a DTD, which XMPP
      // forbids; an undefined entity is a reference we refuse to resolve (no DTD defines one), not a typo.
      if (/doctype/i.test(message)) return this.#fail('restricted-xml', DTD_REFUSED);
      if (/undefined entity/i.test(message)) return this.#fail('restricted-xml', ENTITY_REFUSED);
      this.#fail('not-well-formed', message);
    });
    parser.on('doctype', () => this.#fail('restricted-xml', DTD_REFUSED));
    parser.on('comment', () => this.#fail('restricted-xml', 'comments are not allowed in XMPP'));
    parser.on('processinginstruction', (pi) => {
      this.#fail('restricted-xml', `processing instructions are not allowed in XMPP (<?${pi.target}…?>)`);
    });
    parser.on('opentag', (tag) => this.#open(tag));
    parser.on('closetag', () => this.#close());
    parser.on('text', (text) => this.#text(text));
    parser.on('cdata', (text) => this.#text(text));
    if (options.continued) {
      this.#suppressStart = true;
      this.#started = true;
      let header = '<stream:stream';
      for (const [name, value] of Object.entries(options.declarations ?? DEFAULT_DECLARATIONS)) header += ` ${name}='${escapeAttr(value)}'`;
      parser.write(`${header}>`);
    }
  }

  /** The input held since a holdAfter element (the parser is done after this). */
  takeHeld(): string | undefined {
    const held = this.#held;
    this.#failed = true;
    return held;
  }

  get holding(): boolean {
    return this.#held !== undefined;
  }

  get failed(): boolean {
    return this.#failed;
  }

  /**
   * Between two stanzas with nothing pending: the parser can be dropped and a continued one take over later
   * with nothing lost (a quiet connection's parser is let go to save its memory).
   */
  get atRest(): boolean {
    return this.#rootOpen && !this.#failed && this.#held === undefined && this.#stack.length === 0 && this.#gap === 'space';
  }

  /** The element being parsed, while one is open (the stanza not yet closed). */
  get openElement(): string | undefined {
    return this.#stack[0]?.name;
  }

  /** Feeds raw bytes from the transport. */
  write(chunk: Buffer | Uint8Array): void {
    if (this.#failed) return;
    let text: string;
    try {
      text = (this.#decoder ??= new TextDecoder('utf-8', { fatal: true })).decode(chunk, { stream: true });
    } catch {
      this.#fail('not-well-formed', 'the stream is not valid UTF-8');
      return;
    }
    this.writeText(text, chunk.byteLength);
  }

  /** Feeds text (already decoded); `bytes` is its UTF-8 size when known. */
  writeText(text: string, bytes = Buffer.byteLength(text)): void {
    if (this.#held !== undefined) {
      this.#held += text;
      return;
    }
    if (this.#failed || text === '') return;
    if (!this.#started) {
      // Whitespace before the XML declaration (a client's line break before its restarted stream header, as
      // mattn/go-xmpp sends) is not part of the document: ejabberd and Prosody skip it, and so does this.
      const start = text.search(/[^ \t\r\n]/);
      if (start === -1) return;
      this.#started = true;
      bytes -= start;
      text = text.slice(start);
    }
    const problem = this.#references.check(text);
    if (problem) {
      this.#fail('not-well-formed', problem);
      return;
    }
    const startChar = this.#chunkStartOffset();
    this.#chunk = text;
    this.#chunkStart = startChar;
    try {
      this.#writing = true;
      this.#parser.write(text);
    } catch (err) {
      if (err !== STOP && this.#held === undefined) this.#fail('not-well-formed', (err as Error).message);
    } finally {
      this.#writing = false;
    }
    this.#chunk = '';
    if (this.#held !== undefined) {
      // Keep what came after the held element, unparsed, for the next parser.
      this.#held = text.slice(this.#heldFrom - startChar);
      return;
    }
    if (this.#failed) return;
    // Bytes since the last boundary, up to the end of this chunk.
    const from = this.#boundary - startChar;
    this.#pendingBytes = from > 0 ? Buffer.byteLength(text.slice(from)) : this.#pendingBytes + bytes;
    if (this.#rootOpen && this.#stack.length === 0) {
      // What stands between stanzas is checked first: its own error says more than the size limit.
      this.#checkGap(text, Math.max(from, 0));
      if (this.#failed) return;
      // Whitespace keepalives between stanzas hold nothing: they do not count towards the next stanza.
      if (this.#gap === 'space') {
        this.#pendingBytes = 0;
        this.#forgetLastStanza();
      }
    }
    if (this.#pendingBytes > this.limits.maxStanzaSize) {
      this.#fail(
        'policy-violation',
        this.#stack.length || this.#gap === 'tag'
          ? `stanza larger than the server's limit of ${this.limits.maxStanzaSize} bytes`
          : `more than ${this.limits.maxStanzaSize} bytes (the server's stanza size limit) without a complete stanza`,
      );
    }
  }

  /**
   * Between stanzas only whitespace may come before a '<', and the '<' must start a tag: text, a comment,
   * a processing instruction, CDATA or a DTD there fails now, before saxes would buffer it to its end.
   */
  #checkGap(text: string, from: number): void {
    for (let i = from; i < text.length && this.#gap !== 'tag'; i++) {
      const c = text.charCodeAt(i);
      if (this.#gap === 'space') {
        if (c === 0x3c /* < */) this.#gap = 'lt';
        else if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return this.#fail('not-well-formed', 'text is not allowed between stanzas');
      } else if (this.#gap === 'bang') {
        // '<![CDATA[' is character data, which has no place between stanzas; '<!--' and '<!DOCTYPE' are restricted.
        if (c === 0x5b /* [ */) return this.#fail('not-well-formed', 'character data (CDATA) is not allowed between stanzas');
        return this.#fail('restricted-xml', 'comments and DTDs are not allowed in XMPP');
      } else if (c === 0x21 /* ! */) this.#gap = 'bang';
      else if (c === 0x3f /* ? */) return this.#fail('restricted-xml', 'processing instructions are not allowed in XMPP');
      else this.#gap = 'tag';
    }
  }

  /** A top-level element (or the stream header) ended at the current offset: counting starts again. */
  #markBoundary(): void {
    this.#boundary = this.#offset();
    this.#pendingBytes = 0;
    this.#gap = 'space';
  }

  /** The peer closed the connection: nothing more will come. */
  end(): void {
    this.#failed = true;
  }

  /**
   * The document offset of the parser's next character, valid while saxes emits an event. (saxes'
   * `position` is only right during events; after a write it counts the chunk twice.)
   */
  #offset(): number {
    const internals = this.#parser as unknown as { chunkPosition: number; i: number };
    return internals.chunkPosition + internals.i;
  }

  /**
   * Between stanzas, lets go of what saxes still holds of the last one: the chunk it came in, and the
   * stanza's tag (attributes, namespace declarations), which it keeps as its current tag after the close.
   * Each session's parser lives long, in the old generation; what it points to when the young generation
   * is collected survives, and a busy session's last stanza was promoted there: ~700 bytes per message
   * at 6 000 messages a second, megabytes a second for the mark-compacts to find dead. Only at rest (nothing
   * of the next stanza read yet: a start tag split across chunks is saxes' current tag): the next start tag
   * sets both again before they are read, so the root's stand in.
   */
  #forgetLastStanza(): void {
    const internals = this.#parser as unknown as { chunk: string; tag: SaxesTagNS | null; topNS: Record<string, string> | null; tags: SaxesTagNS[] };
    const root = internals.tags[0];
    if (!root) return;
    internals.chunk = '';
    internals.tag = root;
    internals.topNS = root.ns ?? null;
  }

  /** The document offset where the next chunk starts. */
  #chunkStartOffset(): number {
    return (this.#parser as unknown as { chunkPosition: number }).chunkPosition;
  }

  #fail(condition: ParseErrorCondition, text: string): void {
    if (this.#failed || this.#held !== undefined) return;
    this.#failed = true;
    this.#stack.length = 0;
    this.handlers.error(condition, text);
    // Stop saxes in the middle of the chunk: left to finish it, it would go on parsing what may be a
    // megabyte of hostile input (deep nesting costs it more than linear time) with the event loop held.
    if (this.#writing) throw STOP;
  }

  #open(tag: SaxesTagNS): void {
    if (this.#failed || this.#held !== undefined) return;
    const attrs: Record<string, string> = {};
    const given = tag.attributes;
    // for…in, not Object.entries: no array per attribute (saxes' attribute objects have no enumerable inherited keys).
    for (const name in given) {
      const attr = given[name]!;
      attrs[name] = typeof attr === 'string' ? attr : attr.value;
    }
    if (!this.#rootOpen) {
      this.#rootOpen = true;
      this.#markBoundary();
      if (!this.#suppressStart) this.handlers.streamStart(tag.name, attrs, tag.uri || undefined);
      return;
    }
    if (this.#stack.length >= this.limits.maxDepth) {
      this.#fail('policy-violation', `elements nested deeper than ${this.limits.maxDepth} levels`);
      return;
    }
    const element = new XmlElement(tag.name, attrs, [], tag.uri || undefined);
    const parent = this.#stack[this.#stack.length - 1];
    if (parent) parent.children.push(element);
    this.#stack.push(element);
  }

  #close(): void {
    if (this.#failed || this.#held !== undefined) return;
    const element = this.#stack.pop();
    if (!element) {
      this.#failed = true;
      this.handlers.streamEnd();
      return;
    }
    if (this.#stack.length === 0) {
      // A stanza that ends in this chunk: the bytes since the boundary, up to its end, then check.
      const from = this.#boundary - this.#chunkStart;
      const upTo = this.#chunk.slice(Math.max(from, 0), this.#offset() - this.#chunkStart);
      const size = (from > 0 ? 0 : this.#pendingBytes) + Buffer.byteLength(upTo);
      this.#markBoundary();
      if (size > this.limits.maxStanzaSize) {
        this.#fail('policy-violation', `stanza larger than the server's limit of ${this.limits.maxStanzaSize} bytes`);
        return;
      }
      this.handlers.element(element);
      if (this.options.holdAfter?.(element)) {
        this.#held = '';
        this.#heldFrom = this.#offset();
      }
    }
  }

  #text(text: string): void {
    if (this.#failed || this.#held !== undefined) return;
    const current = this.#stack[this.#stack.length - 1];
    if (current) {
      const last = current.children[current.children.length - 1];
      if (typeof last === 'string') current.children[current.children.length - 1] = last + text;
      else current.children.push(text);
    } else if (this.#rootOpen && /[^\s]/.test(text)) {
      this.#fail('not-well-formed', 'text is not allowed between stanzas');
    }
  }
}

/**
 * Parses one complete element from text (a WebSocket frame, an admin command's stanza argument) with the
 * same restrictions. Throws a ParseError with the condition.
 */
export class ParseError extends Error {
  constructor(
    readonly condition: ParseErrorCondition | 'bad-format',
    message: string,
  ) {
    super(message);
    this.name = 'ParseError';
  }
}

export function parseElement(text: string, limits: StreamParserLimits = DEFAULT_LIMITS): XmlElement {
  let root: XmlElement | undefined;
  let error: ParseError | undefined;
  // Reuse the stream parser by wrapping the text in a synthetic root; a leading XML declaration is allowed.
  const parser = new StreamParser(
    {
      streamStart: () => {},
      element: (element) => {
        if (root) error ??= new ParseError('bad-format', 'expected one element, got several');
        root = element;
      },
      streamEnd: () => {},
      // The stream's wording ("between stanzas") would puzzle a caller who sent one element.
      error: (condition, message) => (error ??= new ParseError(condition, message.replace('between stanzas', 'outside the element'))),
    },
    limits,
  );
  parser.writeText('<root>');
  parser.writeText(text.replace(/^\s*<\?xml\s[^?]*\?>/, ''));
  // Closing the synthetic root over an open element would report a close tag nobody wrote.
  const open = parser.openElement;
  if (!error && open) error = new ParseError('bad-format', `the text ends before <${open}> is closed`);
  if (!error) parser.writeText('</root>');
  if (error) throw error;
  if (!root) throw new ParseError('bad-format', 'expected an XML element');
  return root;
}
