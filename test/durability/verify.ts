/**
 * What the crash test (crash.test.ts) checks after the restart, against the ledger the load (load.ts) kept:
 * everything acknowledged is there and works, through the API and XMPP, and nothing is half-written, in
 * the database directly (rows without their credentials, groups without their item, truncated messages).
 * Each check through the API is paired with a control showing the same path can say "no" (a wrong
 * password, an unknown token), so that a pass means something.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import type { SqlSettings } from '../../kernel/src/storage/database.js';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { ADMIN, HOST, TOKEN_SCOPE, basic, passwordOf, type Ledger, type RosterVersion, type SentMessage } from './load.js';

export interface Target {
  readonly httpPort: number;
  readonly c2sPort: number;
}

interface Answer {
  status: number;
  body: any;
  text: string;
}

export async function api(port: number, command: string, args: Record<string, unknown>, authorization = basic(ADMIN)): Promise<Answer> {
  const res = await fetch(`http://127.0.0.1:${port}/api/${command}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify(args),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON.
  }
  return { status: res.status, body, text };
}

/** Runs `work` on every item, `width` at a time. */
async function eachLimited<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

function countOf(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** A knex connection to the server's database, for looking at the rows themselves. */
export function openDatabase(sql: SqlSettings, serverDir: string): Knex {
  switch (sql.type) {
    case 'sqlite':
      // The server has it open too: WAL lets a reader in beside it.
      return knexFactory({ client: 'better-sqlite3', connection: { filename: join(serverDir, 'data', sql.database) }, useNullAsDefault: true });
    case 'mysql':
      return knexFactory({ client: 'mysql2', connection: { host: sql.server, port: sql.port, user: sql.username, password: sql.password, database: sql.database } });
    case 'pgsql':
      return knexFactory({ client: 'pg', connection: { host: sql.server, port: sql.port, user: sql.username, password: sql.password, database: sql.database } });
  }
}

/** How many of each kind were checked; `unacked` counts writes the kill caught that had committed anyway. */
export interface Summary {
  registrations: { acked: number; unacked: number };
  roster: { acked: number; unacked: number };
  messages: { acked: number; unacked: number };
  tokens: { acked: number };
  /** Messages found in both archives (mod_mam): acknowledged ones, and ones the kill caught committed. */
  archived: { acked: number; unacked: number };
}

/** Everything, in the order that keeps the evidence: rows first (delivery deletes offline messages). */
export async function verify(target: Target, ledger: Ledger, db: Knex, owners: readonly string[], recipients: readonly string[]): Promise<Summary> {
  const summary: Summary = { registrations: { acked: 0, unacked: 0 }, roster: { acked: 0, unacked: 0 }, messages: { acked: 0, unacked: 0 }, tokens: { acked: 0 }, archived: { acked: 0, unacked: 0 } };
  await checkRows(db, ledger, owners);
  await checkArchives(db, ledger, summary);
  await checkRegistrations(target, ledger, summary);
  await checkTokens(target, ledger, summary);
  await checkRosters(target, ledger, owners, summary);
  await checkOfflineMessages(target, ledger, db, recipients, summary);
  return summary;
}

/** Nothing half-written, row by row. */
async function checkRows(db: Knex, ledger: Ledger, owners: readonly string[]): Promise<void> {
  // An account row always carries its credentials (SCRAM keys, or a password with auth_password_format: plain):
  // a salt, an iteration count, and both keys of each hash auth_scram_hash stored (at least one), never one alone.
  const users: Array<Record<string, unknown>> = await db('users').select('*');
  const present = (row: Record<string, unknown>, column: string) => row[column] != null && row[column] !== '';
  const scramHashes = ['sha1', 'sha256', 'sha512'];
  const complete = (row: Record<string, unknown>) =>
    present(row, 'scram_salt') &&
    present(row, 'scram_iterations') &&
    scramHashes.some((h) => present(row, `scram_${h}_stored`)) &&
    scramHashes.every((h) => present(row, `scram_${h}_stored`) === present(row, `scram_${h}_server`));
  const incomplete = users.filter((row) => row.password == null && !complete(row)).map((row) => row.username);
  expect(incomplete, 'account rows without their credentials').to.deep.equal([]);

  // Groups belong to an item; each item the load set has its two groups and its name.
  const orphans = await db('roster_groups as g')
    .leftJoin('roster_items as i', function () {
      this.on('g.host', 'i.host').andOn('g.username', 'i.username').andOn('g.jid', 'i.jid');
    })
    .whereNull('i.jid')
    .select('g.username', 'g.jid', 'g.group_name');
  expect(orphans, 'roster groups without their item').to.deep.equal([]);
  const items: Array<{ username: string; jid: string; nick: string | null }> = await db('roster_items').select('username', 'jid', 'nick').where('host', HOST).whereIn('username', [...owners]);
  const groups: Array<{ username: string; jid: string; group_name: string }> = await db('roster_groups').select('username', 'jid', 'group_name').where('host', HOST).whereIn('username', [...owners]);
  for (const item of items) {
    const names = groups.filter((g) => g.username === item.username && g.jid === item.jid).map((g) => g.group_name).sort();
    const versions = ledger.roster.get(item.username)?.get(item.jid) ?? [];
    expect(
      versions.some((v) => v.name === item.nick && v.groups.join('\n') === names.join('\n')),
      `the row of ${item.jid} in ${item.username}'s roster (${item.nick}; ${names.join(', ')}) is one version the client set`,
    ).to.equal(true);
  }
  // The roster version moves in the same transaction as the item (XEP-0237): an owner with items has one.
  for (const owner of new Set(items.map((i) => i.username))) {
    const version = await db('roster_versions').first('version').where({ host: HOST, username: owner });
    expect(version, `the roster version of ${owner}`).to.not.equal(undefined);
  }

  // Each acknowledged token has its row, whole: an account, the scope asked for, a future expiry.
  const hashes = new Map(ledger.tokens.map(({ token, via }) => [createHash('sha256').update(token).digest('hex'), via]));
  const tokenRows: Array<{ token_hash: string; username: string | null; host: string | null; scope: string; expires_at: number | string }> = await db('oauth_tokens').select(
    'token_hash',
    'username',
    'host',
    'scope',
    'expires_at',
  );
  const byHash = new Map(tokenRows.map((row) => [row.token_hash, row]));
  for (const [hash, via] of hashes) {
    const row = byHash.get(hash);
    expect(row, `the row of an acknowledged ${via} token`).to.not.equal(undefined);
    expect(row!.username !== null && row!.host === HOST, `the account of a ${via} token`).to.equal(true);
    expect(row!.scope.split(' '), `the scope of a ${via} token`).to.include(TOKEN_SCOPE);
    expect(Number(row!.expires_at), `the expiry of a ${via} token`).to.be.greaterThan(Date.now());
  }

  // Every stored message is one the load sent, whole.
  const rows: Array<{ username: string; from_jid: string; xml: string }> = await db('offline_messages').select('username', 'from_jid', 'xml').where('host', HOST);
  for (const row of rows) {
    const id = /^<message\b[^>]*?\bid=['"]([^'"]+)['"]/.exec(row.xml)?.[1];
    const sent = id === undefined ? undefined : ledger.messages.get(id);
    expect(sent, `a stored message the load sent: ${row.xml.slice(0, 200)}`).to.not.equal(undefined);
    expect(`${row.username}@${HOST}`).to.equal(sent!.to);
    expect(row.from_jid.startsWith(`${sent!.from}@${HOST}/`), `the sender of ${id}`).to.equal(true);
    expect(/<body>([^<]*)<\/body>/.exec(row.xml)?.[1], `the body of ${id}, whole`).to.equal(sent!.body);
  }
}

/**
 * mod_mam archives each message for its sender (on user_send) and its recipient (on deliver) before the
 * sender's stream counts it in `h`: every acknowledged message, of every round so far, is in both archives,
 * whole and once. Beyond that, the order of the writes holds: a message in the recipient's offline storage
 * was archived for the recipient first, and one archived for the recipient was archived for the sender
 * first; every archived row is one the load sent.
 */
async function checkArchives(db: Knex, ledger: Ledger, summary: Summary): Promise<void> {
  const rows: Array<{ username: string; peer: string; direction: string; xml: string; body: string }> = await db('mam_messages')
    .select('username', 'peer', 'direction', 'xml', 'body')
    .where({ host: HOST, kind: 'chat' });
  const copies = new Map<string, { out: number; in: number }>();
  const problems: string[] = [];
  for (const row of rows) {
    const id = /^<message\b[^>]*?\bid=['"]([^'"]+)['"]/.exec(row.xml)?.[1];
    const sent = id === undefined ? undefined : ledger.messages.get(id);
    if (!sent) {
      problems.push(`an archived message the load never sent: ${row.xml.slice(0, 200)}`);
      continue;
    }
    const [owner, peer] = row.direction === 'out' ? [sent.from, sent.to] : [sent.to.split('@')[0]!, `${sent.from}@${HOST}`];
    if (row.username !== owner || row.peer !== peer) problems.push(`${id} archived for ${row.username} (${row.direction}, peer ${row.peer})`);
    if (row.body !== sent.body || /<body>([^<]*)<\/body>/.exec(row.xml)?.[1] !== sent.body) problems.push(`the archived body of ${id} (${row.direction}) is not whole`);
    const counts = copies.get(id!) ?? { out: 0, in: 0 };
    counts[row.direction === 'out' ? 'out' : 'in']++;
    copies.set(id!, counts);
  }
  for (const [id, c] of copies) {
    if (c.out > 1 || c.in > 1) problems.push(`${id} archived more than once (${c.out} out, ${c.in} in)`);
    if (c.in && !c.out) problems.push(`${id} is in the recipient's archive and not in the sender's`);
  }
  const offline: Array<{ xml: string }> = await db('offline_messages').select('xml').where('host', HOST);
  for (const { xml } of offline) {
    const id = /^<message\b[^>]*?\bid=['"]([^'"]+)['"]/.exec(xml)?.[1];
    if (id !== undefined && !copies.get(id)?.in) problems.push(`${id} is stored offline but not in its recipient's archive`);
  }
  for (const message of ledger.messages.values()) {
    const c = copies.get(message.id);
    const both = c !== undefined && c.out === 1 && c.in === 1;
    if (message.acked && !both) problems.push(`acknowledged ${message.id} from ${message.from} to ${message.to}: ${c?.out ?? 0} sender copy, ${c?.in ?? 0} recipient copy`);
    if (both) summary.archived[message.acked ? 'acked' : 'unacked']++;
  }
  expect(summary.archived.acked, 'acknowledged messages found in both archives').to.be.greaterThan(0);
  expect(problems, 'archive rows missing, duplicated or not whole').to.deep.equal([]);
}

async function checkRegistrations(target: Target, ledger: Ledger, summary: Summary): Promise<void> {
  const listed = await api(target.httpPort, 'registered_users', { host: HOST });
  expect(listed.status, listed.text).to.equal(200);
  const registered = new Set<string>(listed.body);
  const acked = [...ledger.registrations].filter(([, r]) => r.acked);
  expect(acked.length, 'acknowledged registrations to check').to.be.greaterThan(0);
  const missing = acked.filter(([user]) => !registered.has(user)).map(([user]) => user);
  expect(missing, 'acknowledged registrations missing after the restart').to.deep.equal([]);
  // The control: check_password says no to a wrong password, so its yes below means the password works.
  const [someone] = acked[0]!;
  expect((await api(target.httpPort, 'check_password', { user: someone, host: HOST, password: 'not-the-password' })).body).to.equal(1);
  const present = [...ledger.registrations].filter(([user]) => registered.has(user));
  const refused: string[] = [];
  await eachLimited(present, 8, async ([user, { password }]) => {
    const res = await api(target.httpPort, 'check_password', { user, host: HOST, password });
    if (res.body !== 0) refused.push(`${user}: ${res.status} ${res.text}`);
  });
  // Unacknowledged ones that committed anyway must be whole too: the password works.
  expect(refused, 'registered accounts whose password does not work').to.deep.equal([]);
  summary.registrations.acked = acked.length;
  summary.registrations.unacked = present.filter(([, r]) => !r.acked).length;
}

async function checkTokens(target: Target, ledger: Ledger, summary: Summary): Promise<void> {
  expect(ledger.tokens.length, 'acknowledged tokens to check').to.be.greaterThan(0);
  // The controls: without credentials, and with a token the server never issued, the command is refused.
  expect((await api(target.httpPort, 'registered_vhosts', {}, '')).status).to.be.oneOf([401, 403]);
  expect((await api(target.httpPort, 'registered_vhosts', {}, 'Bearer never-issued-token')).status).to.equal(401);
  const refused: string[] = [];
  await eachLimited(ledger.tokens, 8, async ({ token, via }) => {
    const res = await api(target.httpPort, 'registered_vhosts', {}, `Bearer ${token}`);
    if (res.status !== 200) refused.push(`${via} token ${createHash('sha256').update(token).digest('hex').slice(0, 12)}…: ${res.status} ${res.text}`);
  });
  expect(refused, 'acknowledged tokens that no longer work').to.deep.equal([]);
  summary.tokens.acked = ledger.tokens.length;
}

async function checkRosters(target: Target, ledger: Ledger, owners: readonly string[], summary: Summary): Promise<void> {
  const problems: string[] = [];
  for (const owner of owners) {
    const res = await api(target.httpPort, 'get_roster', { user: owner, host: HOST });
    expect(res.status, res.text).to.equal(200);
    const stored = new Map<string, { nick: string; groups: string[] }>((res.body as Array<{ jid: string; nick: string; groups: string[] }>).map((i) => [i.jid, i]));
    const set = ledger.roster.get(owner) ?? new Map<string, RosterVersion[]>();
    for (const jid of stored.keys()) if (!set.has(jid)) problems.push(`${owner} has ${jid}, which no client set`);
    for (const [contact, versions] of set) {
      const item = stored.get(contact);
      const lastAcked = versions.map((v) => v.acked).lastIndexOf(true);
      if (lastAcked >= 0) summary.roster.acked++;
      if (!item) {
        if (lastAcked >= 0) problems.push(`${owner} lost ${contact} (acknowledged as ${versions[lastAcked]!.name})`);
        continue;
      }
      if (lastAcked < 0) summary.roster.unacked++;
      // The last acknowledged version, or one sent after it that committed before the kill; never an older one.
      const candidates = versions.slice(Math.max(lastAcked, 0));
      const matches = candidates.some((v) => v.name === item.nick && [...v.groups].sort().join('\n') === [...item.groups].sort().join('\n'));
      if (!matches) problems.push(`${owner}'s ${contact} is "${item.nick}" in ${item.groups.join(', ')}; expected ${candidates.map((v) => `"${v.name}"`).join(' or ')}`);
    }
  }
  expect(summary.roster.acked, 'acknowledged roster items to check').to.be.greaterThan(0);
  expect(problems, 'roster items lost or changed').to.deep.equal([]);
}

/**
 * Each recipient logs in and sends its initial presence: what get_offline_count counted (as many as the
 * rows) arrives, every acknowledged message among it, each whole and once.
 */
async function checkOfflineMessages(target: Target, ledger: Ledger, db: Knex, recipients: readonly string[], summary: Summary): Promise<void> {
  const pendingAcked = [...ledger.messages.values()].filter((m) => m.acked && !m.delivered);
  expect(pendingAcked.length, 'acknowledged offline messages to check').to.be.greaterThan(0);
  for (const recipient of recipients) {
    const counted = await api(target.httpPort, 'get_offline_count', { user: recipient, host: HOST });
    expect(counted.status, counted.text).to.equal(200);
    const rows = await db('offline_messages').count({ n: '*' }).where({ host: HOST, username: recipient });
    expect(Number(rows[0]!.n), `get_offline_count of ${recipient} counts its rows`).to.equal(counted.body);
    const peer = await RawXmppPeer.connect(target.c2sPort);
    try {
      await peer.login(recipient, passwordOf(recipient), { resource: 'after-crash' });
      peer.write('<presence/>');
      const expected = counted.body as number;
      const deadline = Date.now() + 15_000;
      while (countOf(peer.received, '</message>') < expected && Date.now() < deadline && !peer.isClosed) await new Promise((r) => setTimeout(r, 20));
      // A moment for anything beyond the count (there should be nothing).
      await new Promise((r) => setTimeout(r, 200));
      const got = [...peer.received.matchAll(/<message\b[^>]*>[\s\S]*?<\/message>/g)].map((m) => m[0]);
      expect(got.length, `messages delivered to ${recipient}`).to.equal(expected);
      const seen = new Set<string>();
      for (const stanza of got) {
        const id = /^<message\b[^>]*?\bid=['"]([^'"]+)['"]/.exec(stanza)?.[1];
        const sent: SentMessage | undefined = id === undefined ? undefined : ledger.messages.get(id);
        expect(sent, `a delivered message the load sent: ${stanza.slice(0, 200)}`).to.not.equal(undefined);
        expect(seen.has(id!), `${id} delivered once`).to.equal(false);
        seen.add(id!);
        expect(sent!.to).to.equal(`${recipient}@${HOST}`);
        expect(/<body>([^<]*)<\/body>/.exec(stanza)?.[1], `the body of ${id}, whole`).to.equal(sent!.body);
        expect(sent!.delivered, `${id} was not delivered before`).to.equal(false);
        sent!.delivered = true;
        if (sent!.acked) summary.messages.acked++;
        else summary.messages.unacked++;
      }
    } finally {
      peer.destroy();
    }
  }
  const lost = pendingAcked.filter((m) => !m.delivered).map((m) => `${m.id} to ${m.to}`);
  expect(lost, 'acknowledged offline messages that were not delivered').to.deep.equal([]);
}
