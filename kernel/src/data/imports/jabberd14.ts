/**
 * Converts jabberd 1.4 spool files (xdb_file: `<spool>/<host>/<user>.xml`, one `<xdb>` element per user) into
 * an XEP-0227 document, as ejabberd's jd2ejd did: the password (jabber:iq:auth), the roster, the vCard, offline
 * messages (jabber:x:offline, their jabber:x:delay stamps carried over as urn:xmpp:delay) and private XML
 * (elements flagged j_private_flag='1'). The rest (last activity, hashed passwords, browse data, filters…)
 * is named in the notes. The user is the file's name, the host the directory's, as in jd2ejd.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ParseError, parseElement, x, type StreamParserLimits, type XmlElement } from '@service/plugin-api';
import { NS_CLIENT, NS_DELAY, NS_PRIVATE, NS_ROSTER, NS_VCARD, PieDocument, type Conversion, type ConversionNote } from './pie.js';
import { SaxesParser } from 'saxes';
import { fsReason } from '../fs-reason.js';
import { ImportInputError, listDir } from './errors.js';

const NS_AUTH = 'jabber:iq:auth';
const NS_OFFLINE = 'jabber:x:offline';
const NS_LEGACY_DELAY = 'jabber:x:delay';

/** Spool files can be large (offline messages): allow more than a stanza. */
const SPOOL_LIMITS: StreamParserLimits = { maxStanzaSize: 64 << 20, maxDepth: 100 };

/** Names jabberd accepted for a user file and its host directory (nodeprep/nameprep are checked on import). */
const USER = /^[^\s@/"&'<>:]+$/;
const HOST = /^[^\s@/]+$/;

export interface SpoolProgress {
  (done: number, total: number, label: string): void;
}

/** One spool file: `<host dir>/<user>.xml`. */
export async function convertSpoolFile(file: string): Promise<Conversion> {
  const doc = new PieDocument();
  const notes: ConversionNote[] = [];
  await addSpoolFile(doc, file, notes);
  return { document: doc.root, users: doc.users, notes };
}

/**
 * A host's spool directory (its `*.xml` files), or a spool root whose subdirectories are hosts. Files are read
 * one at a time, yielding between them.
 */
export async function convertSpoolDir(dir: string, progress?: SpoolProgress): Promise<Conversion> {
  let entries: string[];
  try {
    if (!(await stat(dir)).isDirectory()) throw new ImportInputError(`${dir} is not a directory (expected a jabberd 1.4 spool directory)`);
    entries = (await readdir(dir)).sort();
  } catch (err) {
    if (err instanceof ImportInputError) throw err;
    throw new ImportInputError(`cannot read ${dir}: ${fsReason(err)}`);
  }
  let files = entries.filter((f) => f.endsWith('.xml')).map((f) => join(dir, f));
  if (!files.length) {
    // A spool root: one directory per host.
    for (const entry of entries) {
      const sub = join(dir, entry);
      if (!(await stat(sub).catch(() => undefined))?.isDirectory()) continue;
      files.push(...(await listDir(sub)).filter((f) => f.endsWith('.xml')).map((f) => join(sub, f)));
    }
  }
  files = files.filter((f) => !basename(f).startsWith('.'));
  if (!files.length) throw new ImportInputError(`${dir} holds no spool files (expected <user>.xml files, or host directories of them)`);
  const doc = new PieDocument();
  const notes: ConversionNote[] = [];
  for (const [i, file] of files.entries()) {
    await addSpoolFile(doc, file, notes);
    progress?.(i + 1, files.length, basename(file));
    await nextTurn();
  }
  return { document: doc.root, users: doc.users, notes };
}

async function addSpoolFile(doc: PieDocument, file: string, notes: ConversionNote[]): Promise<void> {
  const user = basename(file).replace(/\.xml$/, '');
  const host = basename(dirname(file));
  if (!file.endsWith('.xml')) throw new ImportInputError(`${file}: a spool file is named <user>.xml`);
  if (!USER.test(user)) throw new ImportInputError(`${file}: '${user}' is not a user name`);
  if (!HOST.test(host)) throw new ImportInputError(`${file}: the directory '${host}' must be named after the host`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ImportInputError(`cannot read ${file}: ${fsReason(err)}`);
  }
  let xdb: XmlElement;
  try {
    xdb = parseElement(text, SPOOL_LIMITS);
  } catch (err) {
    if (err instanceof ParseError) throw new ImportInputError(`${file}: not well-formed XML: ${err.message}${whereIsError(text)}`);
    throw err;
  }
  if (xdb.local !== 'xdb') throw new ImportInputError(`${file}: expected an <xdb> root element, found <${xdb.name}>`);
  const auth = xdb.elements().find((e) => e.ns === NS_AUTH && e.local === 'password');
  const element = doc.user(host.toLowerCase(), user.toLowerCase(), auth ? auth.text() : undefined);
  if (!auth) notes.push({ file, reason: `${user}@${host} has no plaintext password (jabber:iq:auth): imported without credentials` });
  const privateQuery = x('query', { xmlns: NS_PRIVATE });
  for (const child of xdb.elements()) {
    const clean = withoutXdbAttrs(child);
    if (child === auth) continue;
    if (child.attrs.j_private_flag === '1') {
      privateQuery.append(clean);
      continue;
    }
    switch (child.ns) {
      case NS_ROSTER:
        element.append(rosterOf(clean));
        break;
      case NS_VCARD:
        element.append(vcardOf(clean));
        break;
      case NS_OFFLINE: {
        const messages = clean.getChildren('message').map((m) => offlineMessage(m, host));
        if (messages.length) element.append(x('offline-messages', {}, ...messages));
        break;
      }
      default:
        notes.push({ file, reason: `${user}@${host}: <${child.local} xmlns='${child.ns ?? ''}'> is not imported` });
    }
  }
  if (privateQuery.children.length) element.append(privateQuery);
}

/** A copy without jabberd's storage attributes (xdbns, j_private_flag), at every level. */
function withoutXdbAttrs(element: XmlElement): XmlElement {
  const copy = element.clone();
  const strip = (e: XmlElement) => {
    delete e.attrs.xdbns;
    delete e.attrs.j_private_flag;
    // Pretty-printed spool files: indentation between elements is not data.
    if (e.elements().length) e.children = e.children.filter((c) => typeof c !== 'string' || c.trim() !== '');
    for (const c of e.elements()) strip(c);
  };
  strip(copy);
  return copy;
}

function rosterOf(query: XmlElement): XmlElement {
  const roster = x('query', { xmlns: NS_ROSTER });
  for (const item of query.getChildren('item')) {
    const jid = item.attrs.jid;
    if (!jid) continue;
    const subscription = ['none', 'to', 'from', 'both'].includes(item.attrs.subscription ?? '') ? item.attrs.subscription : 'none';
    roster.append(
      x('item', { jid, name: item.attrs.name || undefined, subscription, ask: item.attrs.ask === 'subscribe' ? 'subscribe' : undefined }, ...item.getChildren('group').map((g) => x('group', {}, g.text()))),
    );
  }
  return roster;
}

function vcardOf(vcard: XmlElement): XmlElement {
  const copy = vcard.clone();
  copy.name = 'vCard';
  copy.attrs.xmlns = NS_VCARD;
  return copy;
}

/** jabberd's jabber:x:delay stamp (CCYYMMDDThh:mm:ss, UTC) as XEP-0082. */
function legacyStamp(stamp: string): string | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2}):(\d{2}):(\d{2})/.exec(stamp);
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z` : undefined;
}

/** Sets the namespace of an element and of the descendants that inherit it (no xmlns of their own). */
function inNamespace(element: XmlElement, ns: string): XmlElement {
  element.ns = element.attrs.xmlns ?? ns;
  for (const child of element.elements()) inNamespace(child, element.ns);
  return element;
}

function offlineMessage(message: XmlElement, host: string): XmlElement {
  // Stored inside <foo xmlns='jabber:x:offline'>, the message inherited that namespace: it is a client stanza.
  const copy = inNamespace(message.clone(), NS_CLIENT);
  copy.attrs.xmlns = NS_CLIENT;
  if (!copy.getChild('delay', NS_DELAY)) {
    const legacy = copy.elements().find((e) => e.local === 'x' && e.attrs.xmlns === NS_LEGACY_DELAY);
    const stamp = legacy?.attrs.stamp ? legacyStamp(legacy.attrs.stamp) : undefined;
    if (stamp) copy.append(x('delay', { xmlns: NS_DELAY, from: legacy?.attrs.from ?? host, stamp }));
  }
  return copy;
}

/** Where a strict XML parser stops in the text: ` (line L, column C)`, or nothing. */
function whereIsError(text: string): string {
  const parser = new SaxesParser({ xmlns: false, position: true });
  let where = '';
  parser.on('error', (e) => {
    where ||= ` (line ${parser.line}, column ${parser.column})`;
    void e;
  });
  try {
    parser.write(text).close();
  } catch {
    // The position was taken by the handler.
  }
  return where;
}
