/**
 * Converts a Prosody 0.12 data directory (file storage, mod_storage_internal) into an XEP-0227 document:
 * `<data_dir>/<host>/<store>/<user>.dat|.list`, names URL-encoded (`example%2eorg`). Accounts (plaintext
 * password, or SCRAM keys in hex with salt and iteration count), rosters (with pending subscription requests),
 * vCards, private XML, offline messages, PEP nodes (pep/) and their items (pep_<node>/). Other stores are named
 * in the notes and left alone. Files are read with async I/O, one at a time, yielding between them.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { XmlElement, x } from '@service/plugin-api';
import { LuaTable, parseLuaList, parseLuaReturn, type LuaValue } from './lua-data.js';
import {
  NS_CLIENT,
  NS_DELAY,
  NS_PRIVATE,
  NS_PUBSUB,
  NS_PUBSUB_OWNER,
  NS_ROSTER,
  PieDocument,
  nodeConfigForm,
  scramCredentials,
  stampOf,
  type Conversion,
  type ConversionNote,
} from './pie.js';
import { fsReason } from '../fs-reason.js';
import { ImportInputError, listDir } from './errors.js';

/** Stores imported; any other directory of a host is reported and skipped. */
const KNOWN_STORES = new Set(['accounts', 'roster', 'vcard', 'private', 'offline', 'pep']);

/** Prosody's datamanager encodes every character but letters, digits and `_` (a few more are harmless). */
export function decodeProsodyName(name: string): string {
  return Buffer.from(name.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');
}

/** A preserialized stanza (`{ name = …, attr = {…}, child, "text", … }`) as an element. */
export function stanzaOf(value: LuaValue | undefined, where: string, parentNs?: string): XmlElement {
  if (!(value instanceof LuaTable)) throw new ImportInputError(`${where}: expected a stanza table (a table with name and attr)`);
  const name = value.get('name');
  if (typeof name !== 'string' || !name) throw new ImportInputError(`${where}: a stanza table without a name`);
  const attrs: Record<string, string> = {};
  const attrTable = value.get('attr');
  if (attrTable instanceof LuaTable) {
    for (const [key, v] of attrTable.hash) if (typeof key === 'string' && (typeof v === 'string' || typeof v === 'number')) attrs[key] = String(v);
  }
  // Prosody stores the inherited namespace on every element: written once, where it changes.
  if (attrs.xmlns !== undefined && attrs.xmlns === parentNs) delete attrs.xmlns;
  const element = new XmlElement(name, attrs, [], attrs.xmlns ?? parentNs);
  for (const child of value.array) {
    if (typeof child === 'string') element.children.push(child);
    else if (child instanceof LuaTable) element.children.push(stanzaOf(child, where, element.ns));
  }
  return element;
}

export interface ProsodyProgress {
  (done: number, total: number, label: string): void;
}

interface UserFiles {
  /** store → file path */
  readonly stores: Map<string, string>;
}

/** Reads a Prosody data directory. Throws ImportInputError when the directory is not one. */
export async function convertProsodyDir(dir: string, progress?: ProsodyProgress): Promise<Conversion> {
  let entries: string[];
  try {
    const info = await stat(dir);
    if (!info.isDirectory()) throw new ImportInputError(`${dir} is not a directory (expected Prosody's data_path)`);
    entries = (await readdir(dir)).sort();
  } catch (err) {
    if (err instanceof ImportInputError) throw err;
    throw new ImportInputError(`cannot read ${dir}: ${fsReason(err)}`);
  }
  const notes: ConversionNote[] = [];
  // host → user → store → file
  const hosts = new Map<string, Map<string, UserFiles>>();
  let files = 0;
  for (const entry of entries) {
    const hostDir = join(dir, entry);
    if (!(await stat(hostDir).catch(() => undefined))?.isDirectory()) continue;
    const host = decodeProsodyName(entry);
    if (!/^[^\s@/]+$/.test(host) || host === '*') {
      notes.push({ file: hostDir, reason: `'${host}' is not a virtual host: skipped` });
      continue;
    }
    const users = new Map<string, UserFiles>();
    for (const storeEntry of await listDir(hostDir)) {
      const storeDir = join(hostDir, storeEntry);
      if (!(await stat(storeDir).catch(() => undefined))?.isDirectory()) continue;
      const store = decodeProsodyName(storeEntry);
      if (!KNOWN_STORES.has(store) && !store.startsWith('pep_')) {
        notes.push({ file: storeDir, reason: `Prosody store '${store}' is not imported` });
        continue;
      }
      for (const file of await listDir(storeDir)) {
        const m = /^(.+)\.(dat|list)$/.exec(file);
        if (!m) continue;
        const user = decodeProsodyName(m[1]!);
        let userFiles = users.get(user);
        if (!userFiles) users.set(user, (userFiles = { stores: new Map() }));
        userFiles.stores.set(store, join(storeDir, file));
      }
    }
    if (users.size) hosts.set(host, users);
    for (const u of users.values()) files += u.stores.size;
  }
  if (!hosts.size) throw new ImportInputError(`${dir} holds no Prosody accounts (expected <host>/accounts/<user>.dat, the host's dots written %2e)`);

  const doc = new PieDocument();
  let done = 0;
  for (const [host, users] of hosts) {
    for (const [user, userFiles] of [...users].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const accountFile = userFiles.stores.get('accounts');
      if (!accountFile) {
        notes.push({ file: [...userFiles.stores.values()][0]!, reason: `${user}@${host} has data but no account: skipped` });
        done += userFiles.stores.size;
        continue;
      }
      const account = await readDat(accountFile);
      const element = accountElement(doc, host, user, account, accountFile, notes);
      done++;
      progress?.(done, files, `${user}@${host}`);
      for (const [store, file] of userFiles.stores) {
        if (store === 'accounts') continue;
        await nextTurn();
        if (store.startsWith('pep_')) addPepItems(element, store.slice(4), parseLuaList(await readText(file), file), file);
        else await addStore(element, host, store, file, notes);
        done++;
        progress?.(done, files, `${user}@${host}`);
      }
      sortPubsub(element);
    }
  }
  return { document: doc.root, users: doc.users, notes };
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new ImportInputError(`cannot read ${file}: ${fsReason(err)}`);
  }
}

async function readDat(file: string): Promise<LuaValue> {
  return parseLuaReturn(await readText(file), file);
}

function accountElement(doc: PieDocument, host: string, user: string, account: LuaValue, file: string, notes: ConversionNote[]): XmlElement {
  if (!(account instanceof LuaTable)) throw new ImportInputError(`${file}: expected a table of account properties`);
  const password = account.get('password');
  const element = doc.user(host, user, typeof password === 'string' ? password : undefined);
  const storedKey = account.get('stored_key');
  const serverKey = account.get('server_key');
  const salt = account.get('salt');
  const iterations = account.get('iteration_count');
  if (typeof storedKey === 'string' && typeof serverKey === 'string' && typeof salt === 'string' && typeof iterations === 'number') {
    if (!/^[0-9a-fA-F]+$/.test(storedKey) || storedKey.length !== serverKey.length) throw new ImportInputError(`${file}: stored_key and server_key must be hexadecimal keys of one length`);
    const hash = ({ 40: 'SHA-1', 64: 'SHA-256', 128: 'SHA-512' } as const)[storedKey.length as 40 | 64 | 128];
    if (!hash) throw new ImportInputError(`${file}: a SCRAM key of ${storedKey.length / 2} bytes matches no SCRAM hash`);
    // Prosody's salt is the text it salted with (a UUID), not base64.
    element.append(scramCredentials(hash, { iterations, salt: Buffer.from(salt, 'utf8'), storedKey: Buffer.from(storedKey, 'hex'), serverKey: Buffer.from(serverKey, 'hex') }));
  } else if (typeof password !== 'string') {
    notes.push({ file, reason: `${user}@${host} has neither a password nor SCRAM keys: imported without credentials` });
  }
  return element;
}

async function addStore(user: XmlElement, host: string, store: string, file: string, notes: ConversionNote[]): Promise<void> {
  const where = file;
  switch (store) {
    case 'roster':
      return addRoster(user, await readDat(file));
    case 'vcard': {
      const value = await readDat(file);
      if (value !== null) user.append(stanzaOf(value, where));
      return;
    }
    case 'private': {
      const value = await readDat(file);
      if (!(value instanceof LuaTable)) return;
      const query = x('query', { xmlns: NS_PRIVATE });
      for (const [, stanza] of value.entries()) query.append(stanzaOf(stanza, where));
      if (query.children.length) user.append(query);
      return;
    }
    case 'offline': {
      const items = parseLuaList(await readText(file), file);
      if (!items.length) return;
      const offline = x('offline-messages', {});
      for (const item of items) {
        const message = stanzaOf(item, where, NS_CLIENT);
        const when = item instanceof LuaTable ? item.get('when') : undefined;
        const stamp = message.attrs.stamp ?? (typeof when === 'number' ? stampOf(when) : undefined);
        delete message.attrs.stamp;
        delete message.attrs.stamp_legacy;
        if (!message.attrs.xmlns) message.attrs.xmlns = NS_CLIENT;
        if (stamp && !message.getChild('delay', NS_DELAY)) message.append(x('delay', { xmlns: NS_DELAY, from: host, stamp }));
        offline.append(message);
      }
      user.append(offline);
      return;
    }
    case 'pep':
      return addPepNodes(user, await readDat(file));
    default:
      notes.push({ file, reason: `Prosody store '${store}' is not imported` });
  }
}

function addRoster(user: XmlElement, value: LuaValue): void {
  if (!(value instanceof LuaTable)) return;
  const query = x('query', { xmlns: NS_ROSTER });
  const pending: string[] = [];
  for (const [key, item] of value.hash) {
    if (key === false) {
      if (item instanceof LuaTable) {
        const version = item.get('version');
        if (typeof version === 'string' || typeof version === 'number') query.attrs.ver = String(version);
        const waiting = item.get('pending');
        if (waiting instanceof LuaTable) for (const [from] of waiting.entries()) pending.push(from);
      }
      continue;
    }
    if (typeof key !== 'string' || !(item instanceof LuaTable)) continue;
    const str = (name: string) => {
      const v = item.get(name);
      return typeof v === 'string' ? v : undefined;
    };
    const element = x('item', { jid: key, name: str('name'), subscription: str('subscription') ?? 'none', ask: str('ask') });
    const groups = item.get('groups');
    if (groups instanceof LuaTable) for (const [group] of groups.entries()) element.append(x('group', {}, group));
    query.append(element);
  }
  if (!query.children.length && !pending.length) return;
  user.append(query);
  for (const from of pending) user.append(x('presence', { xmlns: NS_CLIENT, from, type: 'subscribe' }));
}

function pubsubOf(user: XmlElement, ns: string): XmlElement {
  let pubsub = user.getChild('pubsub', ns);
  if (!pubsub) user.append((pubsub = x('pubsub', { xmlns: ns })));
  return pubsub;
}

function addPepNodes(user: XmlElement, value: LuaValue): void {
  if (!(value instanceof LuaTable)) return;
  for (const [name, node] of value.entries()) {
    const owner = pubsubOf(user, NS_PUBSUB_OWNER);
    const config: Array<[string, string]> = [];
    const conf = node instanceof LuaTable ? node.get('config') : undefined;
    if (conf instanceof LuaTable) {
      for (const [option, v] of conf.entries()) {
        if (option.startsWith('_')) continue;
        if (typeof v === 'string' || typeof v === 'number') config.push([option, String(v)]);
        else if (typeof v === 'boolean') config.push([option, v ? '1' : '0']);
      }
    }
    owner.append(x('configure', { node: name }, nodeConfigForm(config)));
    const affiliations = node instanceof LuaTable ? node.get('affiliations') : undefined;
    if (affiliations instanceof LuaTable && affiliations.entries().length) {
      owner.append(x('affiliations', { node: name }, ...affiliations.entries().map(([jid, a]) => x('affiliation', { jid, affiliation: String(a) }))));
    }
    const subscribers = node instanceof LuaTable ? node.get('subscribers') : undefined;
    if (subscribers instanceof LuaTable && subscribers.entries().length) {
      owner.append(x('subscriptions', { node: name }, ...subscribers.entries().map(([jid]) => x('subscription', { jid, subscription: 'subscribed' }))));
    }
  }
}

function addPepItems(user: XmlElement, node: string, items: LuaValue[], where: string): void {
  if (!items.length) return;
  const itemsElement = x('items', { node });
  for (const item of items) {
    if (!(item instanceof LuaTable)) continue;
    const key = item.get('key');
    const payload = stanzaOf(item, where);
    delete payload.attrs.stamp;
    itemsElement.append(x('item', { id: typeof key === 'string' || typeof key === 'number' ? String(key) : undefined }, payload));
  }
  pubsubOf(user, NS_PUBSUB).append(itemsElement);
}

/** Node configurations before items, whatever order the stores were read in. */
function sortPubsub(user: XmlElement): void {
  const owner = user.getChild('pubsub', NS_PUBSUB_OWNER);
  const items = user.getChild('pubsub', NS_PUBSUB);
  if (!owner || !items) return;
  user.children = user.children.filter((c) => c !== owner && c !== items);
  user.children.push(owner, items);
}
