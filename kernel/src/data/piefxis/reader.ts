/**
 * Reads a XEP-0227 file as a stream (saxes), one `<user>` at a time: the caller sees each host and each
 * user element, never the whole file, so a file of any size is read in bounded memory. It follows the
 * `<xi:include href=…/>` of an index file (ejabberd's export_piefxis writes one file per host and an index
 * that includes them), for files in the same directory only. A malformed file, or one that is not XEP-0227,
 * is a PiefxisFormatError naming the file and the line.
 */
import { createReadStream } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SaxesTagNS } from 'saxes';
import { FastSaxesParser, XmlElement } from '@service/plugin-api';

export const NS_PIE = 'urn:xmpp:pie:0';
/** The namespace of XEP-0227 before 1.0, still written by old exports. */
export const NS_PIE_OLD = 'http://www.xmpp.org/extensions/xep-0227.html#ns';
export const NS_XINCLUDE = 'http://www.w3.org/2001/XInclude';

const MAX_DEPTH = 64;
const MAX_INCLUDE_DEPTH = 2;
/** The longest the import runs before it gives the event loop a turn (other clients, API calls). */
const TURN_MS = 10;

export interface Location {
  readonly file: string;
  readonly line: number;
}

export class PiefxisFormatError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly problem: string,
  ) {
    super(`${file}, line ${line}: ${problem}`);
    this.name = 'PiefxisFormatError';
  }
}

export interface PiefxisEvents {
  /** A `<host jid=…>` opens (its users follow). */
  host(jid: string, at: Location): void | Promise<void>;
  /** A whole `<user>` of the host last opened. */
  user(host: string, user: XmlElement, at: Location): void | Promise<void>;
  /** Another child of `<host>` (host-level data): the caller decides what to do with it. */
  hostElement(host: string, element: XmlElement, at: Location): void | Promise<void>;
}

export function isPieNs(ns: string | undefined): boolean {
  return ns === NS_PIE || ns === NS_PIE_OLD;
}

type Event =
  | { kind: 'host'; jid: string; at: Location }
  | { kind: 'user'; host: string; element: XmlElement; at: Location }
  | { kind: 'hostElement'; host: string; element: XmlElement; at: Location }
  | { kind: 'include'; href: string; at: Location };

/** Reads the file (and the files it includes), calling `events` in document order. */
export async function readPiefxisFile(path: string, events: PiefxisEvents): Promise<void> {
  await readOne(path, events, 0);
}

async function readOne(path: string, events: PiefxisEvents, includeDepth: number): Promise<void> {
  const file = path;
  const queue: Event[] = [];
  const parser = new FastSaxesParser({ xmlns: true, position: true });
  let failure: PiefxisFormatError | undefined;
  const fail = (problem: string): never => {
    failure ??= new PiefxisFormatError(file, parser.line, problem);
    throw failure;
  };
  /** Elements being built (a user or another child of a host), innermost last. */
  const stack: XmlElement[] = [];
  /** What the open ancestors are: 'server-data', 'host', or 'building' below a host. */
  let rootSeen = false;
  let openRoot: 'server-data' | 'host' | undefined;
  let currentHost: string | undefined;
  let builtAt: Location | undefined;
  let depth = 0;

  parser.on('error', (err) => fail(err.message.replace(/^(?:[^:\s]*:)?\d+:\d+: /, '').replace(/\.$/, '')));
  parser.on('doctype', () => fail('a document type declaration (DTD) is not allowed'));
  parser.on('opentag', (tag: SaxesTagNS) => {
    depth++;
    const attrs: Record<string, string> = {};
    for (const [name, attr] of Object.entries(tag.attributes)) attrs[name] = typeof attr === 'string' ? attr : attr.value;
    const ns = tag.uri || undefined;
    if (stack.length) {
      if (stack.length >= MAX_DEPTH) fail(`elements nested deeper than ${MAX_DEPTH} levels`);
      const element = new XmlElement(tag.name, attrs, [], ns);
      stack[stack.length - 1]!.children.push(element);
      stack.push(element);
      return;
    }
    if (!rootSeen) {
      rootSeen = true;
      if (tag.local === 'server-data' && isPieNs(ns)) openRoot = 'server-data';
      else if (tag.local === 'host' && isPieNs(ns)) {
        openRoot = 'host';
        openHost(attrs);
      } else fail(`the document is <${tag.name}${ns ? ` xmlns='${ns}'` : ''}>, not a XEP-0227 <server-data xmlns='${NS_PIE}'> (or <host>)`);
      return;
    }
    if (currentHost === undefined) {
      // Inside <server-data>: hosts and includes.
      if (tag.local === 'host' && isPieNs(ns)) openHost(attrs);
      else if (tag.local === 'include' && ns === NS_XINCLUDE) {
        const href = attrs.href;
        if (!href) fail('<xi:include/> has no href');
        queue.push({ kind: 'include', href: href!, at: { file, line: parser.line } });
      } else fail(`unexpected <${tag.name}> in <server-data> (only <host jid=…> and <xi:include href=…/>)`);
      return;
    }
    // A child of <host>: built whole.
    const element = new XmlElement(tag.name, attrs, [], ns);
    builtAt = { file, line: parser.line };
    stack.push(element);
  });
  parser.on('closetag', () => {
    depth--;
    if (stack.length) {
      const element = stack.pop()!;
      if (stack.length === 0) {
        const at = builtAt!;
        if (element.local === 'user' && isPieNs(element.ns)) queue.push({ kind: 'user', host: currentHost!, element, at });
        else queue.push({ kind: 'hostElement', host: currentHost!, element, at });
      }
      return;
    }
    // Closing a host or the root.
    if (currentHost !== undefined && (openRoot === 'server-data' ? depth === 1 : depth === 0)) currentHost = undefined;
  });
  const text = (t: string) => {
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(t);
  };
  parser.on('text', text);
  parser.on('cdata', text);

  function openHost(attrs: Record<string, string>): void {
    const jid = attrs.jid;
    if (!jid) fail('<host> has no jid');
    currentHost = jid;
    queue.push({ kind: 'host', jid: jid!, at: { file, line: parser.line } });
  }

  const drain = async () => {
    let turnStarted = performance.now();
    while (queue.length) {
      const event = queue.shift()!;
      if (event.kind === 'host') await events.host(event.jid, event.at);
      else if (event.kind === 'user') await events.user(event.host, event.element, event.at);
      else if (event.kind === 'hostElement') await events.hostElement(event.host, event.element, event.at);
      else await include(event.href, event.at);
      // A chunk holds hundreds of users. Queries take turns with the event loop by themselves
      // (storage/sqlite-turns.ts); checking and building users is JavaScript alone, which gives way here.
      if (performance.now() - turnStarted >= TURN_MS) {
        await nextTurn();
        turnStarted = performance.now();
      }
    }
  };
  const include = async (href: string, at: Location) => {
    if (includeDepth >= MAX_INCLUDE_DEPTH) throw new PiefxisFormatError(at.file, at.line, `<xi:include href='${href}'/> nested too deep`);
    if (href.includes('/') || href.includes('\\') || href === '.' || href === '..' || basename(href) !== href) {
      throw new PiefxisFormatError(at.file, at.line, `<xi:include href='${href}'/>: only files in the same directory can be included`);
    }
    try {
      await readOne(join(dirname(path), href), events, includeDepth + 1);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new PiefxisFormatError(at.file, at.line, `<xi:include href='${href}'/>: no such file`);
      throw err;
    }
  };

  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 64 * 1024 });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      try {
        parser.write(chunk);
      } catch (err) {
        if (failure) throw failure;
        throw err;
      }
      await drain();
      // Between chunks, whatever else the server does runs.
      await nextTurn();
    }
    try {
      parser.close();
    } catch (err) {
      if (failure) throw failure;
      throw err;
    }
    if (!rootSeen) fail('the file is empty');
    await drain();
  } finally {
    stream.destroy();
  }
}
