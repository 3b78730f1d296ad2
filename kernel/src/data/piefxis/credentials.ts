/**
 * Passwords in XEP-0227: a `password` attribute on `<user>` (plain), or `<scram-credentials
 * xmlns='urn:xmpp:pie:0#scram' mechanism='SCRAM-SHA-…'>` children (XEP-0227 1.1 §4.2) with the iteration
 * count, salt and keys in base64. Exports write what is stored (plain or SCRAM keys, never both); imports
 * keep SCRAM keys as they are, so the account logs in with its old password, and store a plain password as
 * the server stores passwords (auth_password_format, auth_scram_hash).
 *
 * ejabberd 23.01 base64-encodes its already base64-encoded salt and keys once more; such a value is
 * recognised by its length (a key decoded once that is base64 text of a key of the hash's size).
 *
 * The account's row is the kernel's (kernel/src/accounts): the import creates accounts through the account
 * service and only then replaces its credential columns by the imported keys.
 */
import { randomBytes } from 'node:crypto';
import { x, type Knex, type XmlElement } from '@service/plugin-api';
import { USERS_TABLE } from '../../accounts/migrations.js';
import { SCRAM_HASHES, SCRAM_KEY_LENGTH, scramHashesOf, type ScramHash } from '../../accounts/scram.js';
import type { KernelServices } from '../../modules/services.js';

export const NS_SCRAM = 'urn:xmpp:pie:0#scram';

const MECHANISMS: Readonly<Record<string, ScramHash>> = { 'SCRAM-SHA-1': 'sha1', 'SCRAM-SHA-256': 'sha256', 'SCRAM-SHA-512': 'sha512' };
const MECHANISM_OF: Readonly<Record<ScramHash, string>> = { sha1: 'SCRAM-SHA-1', sha256: 'SCRAM-SHA-256', sha512: 'SCRAM-SHA-512' };
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

export interface ImportedScram {
  readonly salt: Buffer;
  readonly iterations: number;
  readonly keys: Partial<Record<ScramHash, { storedKey: Buffer; serverKey: Buffer }>>;
}

export type ImportedCredentials =
  | { readonly kind: 'plain'; readonly password: string }
  | { readonly kind: 'scram'; readonly scram: ImportedScram; readonly dropped: string[] }
  | { readonly kind: 'none' };

/** The database of accounts, as the server chooses it (auth_method). */
export function accountsDb(services: KernelServices): Knex {
  return services.storage.db(services.config().auth_method.includes('sql') ? 'sql' : 'mnesia');
}

type Row = Record<string, string | number | null>;

/** The credential part of `<user>` for an account as stored: a password attribute, or SCRAM elements. */
export async function exportCredentials(services: KernelServices, user: string, host: string): Promise<{ password?: string; elements: XmlElement[] }> {
  const row = (await accountsDb(services)(USERS_TABLE).first('*').where({ host, username: user })) as Row | undefined;
  if (!row) return { elements: [] };
  if (row.password !== null && row.password !== undefined) return { password: String(row.password), elements: [] };
  if (row.scram_salt === null || row.scram_iterations === null) return { elements: [] };
  const salt = Buffer.from(String(row.scram_salt), 'base64').toString('base64');
  const elements: XmlElement[] = [];
  for (const hash of SCRAM_HASHES) {
    const stored = row[`scram_${hash}_stored`];
    const server = row[`scram_${hash}_server`];
    if (stored === null || server === null || stored === undefined || server === undefined) continue;
    elements.push(
      x(
        'scram-credentials',
        { xmlns: NS_SCRAM, mechanism: MECHANISM_OF[hash] },
        x('iter-count', {}, String(row.scram_iterations)),
        x('salt', {}, salt),
        x('server-key', {}, String(server)),
        x('stored-key', {}, String(stored)),
      ),
    );
  }
  return { elements };
}

function decode64(text: string, what: string): Buffer {
  const trimmed = text.trim();
  if (!trimmed || !BASE64.test(trimmed)) throw new Error(`${what} is not base64`);
  return Buffer.from(trimmed, 'base64');
}

/** A key: base64 of `length` bytes, or (ejabberd 23.01) base64 of the base64 of them; `twice` says which. */
function decodeKey(text: string, length: number, what: string): { key: Buffer; twice: boolean } {
  const once = decode64(text, what);
  if (once.length === length) return { key: once, twice: false };
  const inner = once.toString('latin1');
  if (BASE64.test(inner)) {
    const twice = Buffer.from(inner, 'base64');
    if (twice.length === length) return { key: twice, twice: true };
  }
  throw new Error(`${what} is ${once.length} bytes long, a ${length}-byte key was expected`);
}

interface ScramEntry {
  readonly hash: ScramHash;
  readonly salt: Buffer;
  readonly iterations: number;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
}

function parseScram(element: XmlElement): ScramEntry {
  const mechanism = element.attr('mechanism') ?? '';
  const hash = MECHANISMS[mechanism.toUpperCase()];
  if (!hash) throw new Error(`<scram-credentials mechanism='${mechanism}'> is not one of ${Object.keys(MECHANISMS).join(', ')}`);
  const child = (name: string) => {
    const text = element.getChildText(name);
    if (text === undefined) throw new Error(`<scram-credentials mechanism='${mechanism}'> has no <${name}>`);
    return text;
  };
  const iterText = child('iter-count').trim();
  const iterations = Number(iterText);
  if (!/^\d+$/.test(iterText) || iterations < 1 || !Number.isSafeInteger(iterations)) throw new Error(`<iter-count> '${iterText}' is not a positive integer`);
  const length = SCRAM_KEY_LENGTH[hash];
  const stored = decodeKey(child('stored-key'), length, `the ${mechanism} <stored-key>`);
  const server = decodeKey(child('server-key'), length, `the ${mechanism} <server-key>`);
  let salt = decode64(child('salt'), `the ${mechanism} <salt>`);
  if (stored.twice || server.twice) salt = decode64(salt.toString('latin1'), `the ${mechanism} <salt> (decoded once)`);
  if (!salt.length) throw new Error(`the ${mechanism} <salt> is empty`);
  return { hash, salt, iterations, storedKey: stored.key, serverKey: server.key };
}

/**
 * The credentials of a `<user>`; throws an Error naming what is malformed. SCRAM keys of several hashes are
 * kept together when they share the salt and iteration count (as this server stores them); otherwise those
 * of the first hash the server offers are kept and the others are listed in `dropped`.
 */
export function credentialsOf(user: XmlElement, serverHashes: readonly ScramHash[]): ImportedCredentials {
  const password = user.attr('password');
  if (password !== undefined && password !== '') return { kind: 'plain', password };
  const entries = user.getChildren('scram-credentials', NS_SCRAM).map(parseScram);
  if (!entries.length) return { kind: 'none' };
  const first = entries.find((e) => serverHashes.includes(e.hash)) ?? entries[0]!;
  const keys: ImportedScram['keys'] = {};
  const dropped: string[] = [];
  for (const entry of entries) {
    if (entry.salt.equals(first.salt) && entry.iterations === first.iterations && !keys[entry.hash]) keys[entry.hash] = { storedKey: entry.storedKey, serverKey: entry.serverKey };
    else dropped.push(MECHANISM_OF[entry.hash]);
  }
  return { kind: 'scram', scram: { salt: first.salt, iterations: first.iterations, keys }, dropped };
}

/** The hashes the server stores and offers (auth_scram_hash). */
export function serverScramHashes(services: KernelServices): readonly ScramHash[] {
  return scramHashesOf(services.config().auth_scram_hash);
}

/**
 * Creates the account with the imported credentials. Notes for the summary are returned (keys of a hash
 * the server does not offer, an account without a password).
 */
export async function createAccount(services: KernelServices, user: string, host: string, credentials: ImportedCredentials): Promise<string[]> {
  const notes: string[] = [];
  if (credentials.kind === 'plain') {
    await services.accounts.register(user, host, credentials.password);
    return notes;
  }
  // Created with a password nobody knows, then given the imported keys (or left so: no password was given).
  await services.accounts.register(user, host, randomBytes(24).toString('base64'));
  if (credentials.kind === 'none') {
    notes.push('no password in the file: the account cannot log in until one is set (change_password)');
    return notes;
  }
  const { scram, dropped } = credentials;
  const columns: Row = { password: null, scram_salt: scram.salt.toString('base64'), scram_iterations: scram.iterations };
  for (const hash of SCRAM_HASHES) {
    const keys = scram.keys[hash];
    columns[`scram_${hash}_stored`] = keys ? keys.storedKey.toString('base64') : null;
    columns[`scram_${hash}_server`] = keys ? keys.serverKey.toString('base64') : null;
  }
  await accountsDb(services)(USERS_TABLE).where({ host, username: user }).update(columns);
  services.accounts.clearCache();
  if (dropped.length) notes.push(`SCRAM keys of ${dropped.join(', ')} left out: they have another salt or iteration count than the ones kept`);
  const offered = serverScramHashes(services);
  const kept = (Object.keys(scram.keys) as ScramHash[]).filter((h) => scram.keys[h]);
  if (!kept.some((h) => offered.includes(h))) {
    notes.push(`SCRAM keys of ${kept.map((h) => MECHANISM_OF[h]).join(', ')} kept, but the server offers ${offered.map((h) => MECHANISM_OF[h]).join(', ') || 'none'} (auth_scram_hash): the account logs in with PLAIN until its password is set again`);
  }
  return notes;
}
