/**
 * Benchmark of mod_mam's page queries on a million-message archive (issue 16: "a page query on a
 * million-message archive under 10 ms").
 *
 *   npm run bench:mam -- [--db sqlite,mysql,pgsql] [--messages 1000000] [--heavy-share 0.5] [--runs 200] [--keep]
 *
 * For each database: a fresh database (SQLite: a file in a temporary directory, opened by the kernel's
 * Storage with the server's pragmas; MariaDB and PostgreSQL on their usual local ports, as the tests find
 * them, in a database created for the run and dropped after), mod_mam's migrations, then the archive
 * filled straight into mam_messages with multi-row INSERTs in large transactions: one heavy owner holds
 * `--heavy-share` of the messages (100 peers, one message a second), the rest are spread over owners of
 * 1 000 messages each. Then, through mod_mam's own ArchiveStore (the code the XMPP query path runs,
 * without the stanza encoding), `--runs` timed runs of each query kind on the heavy owner and on an
 * ordinary one, interleaved: the first page (50), the last page (RSM <before/>), a `with` filter, a page
 * after an id in the middle (after-id, which costs one lookup of the id first), a time range in the
 * middle. On SQLite (unless --no-xmpp) the same queries are then timed through the real server: it is
 * started on the filled file (`servicectl foreground`, mod_mam, loglevel warning), the owners get accounts,
 * and a client logged in over STARTTLS sends each query as an IQ and waits for the IQ result after the
 * page's 50 result messages: the whole XMPP path (parsing, the form, the store, 51 stanzas encoded and
 * written, the client reading them). Prints the median and p99 per kind and writes them with the machine
 * to bench/results/mam-<time>.json and .md.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { createLogger } from '../../kernel/dist/log/logger.js';
import { Storage, type SqlSettings } from '../../kernel/dist/storage/database.js';
import { MAM_MIGRATIONS, MAM_TABLE } from '../../modules/mod_mam/dist/migrations.js';
import { ArchiveStore, type ArchiveFilter, type PageRequest } from '../../modules/mod_mam/dist/store.js';
import { ADMIN_JID, REPO, RESULTS_DIR, basicAuth, callApi, freePort, machineInfo, requireBuild, seedAccounts, startServer, writeConfig } from '../api/lib.js';
import { c2sConfig } from '../c2s/lib.js';
import { RawXmppPeer } from '../../test/support/raw-xmpp.js';
import { scratchDatabase } from './database.js';

const { values: opts } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    messages: { type: 'string', default: '1000000' },
    'heavy-share': { type: 'string', default: '0.5' },
    runs: { type: 'string', default: '200' },
    keep: { type: 'boolean', default: false },
    'no-xmpp': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opts.help) {
  console.log('usage: npm run bench:mam -- [--db sqlite,mysql,pgsql] [--messages N] [--heavy-share 0.5] [--runs 200] [--keep]');
  process.exit(0);
}

type DbType = SqlSettings['type'];
const HOST = 'localhost';
const HEAVY = 'heavy';
const PEERS_OF_HEAVY = 100;
const PER_ORDINARY_OWNER = 1000;
const PAGE = 50;
const FILL_ROWS_PER_INSERT = 200;
const FILL_ROWS_PER_TRANSACTION = 20_000;
const START_MS = Date.UTC(2024, 0, 1);
const QUERIES_PER_CONNECTION = 10;

const total = Number(opts.messages);
const heavyCount = Math.round(total * Number(opts['heavy-share']));
const ordinaryOwners = Math.ceil((total - heavyCount) / PER_ORDINARY_OWNER);
const runs = Number(opts.runs);
const dbTypes = opts.db.split(',').map((d) => d.trim()) as DbType[];

requireBuild();
const logger = createLogger({ level: 'warning' });

const ordinaryName = (i: number) => `owner${String(i).padStart(5, '0')}`;

/** The stored XML of a message, about the size of a short chat line with its attributes. */
function storedXml(from: string, to: string, n: number): string {
  return `<message xmlns="jabber:client" from="${from}/res" to="${to}" type="chat" id="m${n}"><body>message number ${n} of a benchmark archive, a line of ordinary length</body></message>`;
}

/** Fills mam_messages: the heavy owner's share, then the ordinary owners; returns the ms it took. */
async function fill(knex: Knex): Promise<number> {
  const started = Date.now();
  const columns = ['host', 'username', 'peer', 'peer_full', 'stanza_id', 'created_at', 'direction', 'kind', 'xml', 'body'];
  const placeholders = `(${columns.map(() => '?').join(', ')})`;
  let rows: Array<Array<string | number>> = [];
  let n = 0;
  let tx: Knex.Transaction | undefined;
  let inTx = 0;
  const flushRows = async () => {
    if (!rows.length) return;
    tx ??= await knex.transaction();
    await tx.raw(`insert into ${MAM_TABLE} (${columns.join(', ')}) values ${rows.map(() => placeholders).join(', ')}`, rows.flat());
    inTx += rows.length;
    rows = [];
    if (inTx >= FILL_ROWS_PER_TRANSACTION) {
      await tx.commit();
      tx = undefined;
      inTx = 0;
    }
  };
  const add = async (owner: string, peer: string, i: number) => {
    n++;
    const out = i % 2 === 0;
    const ownerJid = `${owner}@${HOST}`;
    const xml = out ? storedXml(ownerJid, peer, n) : storedXml(peer, ownerJid, n);
    rows.push([HOST, owner, peer, `${peer}/res`, `s${n.toString(36)}-${randomBytes(6).toString('base64url')}`, START_MS + i * 1000, out ? 'out' : 'in', 'chat', xml, `message number ${n}`]);
    if (rows.length >= FILL_ROWS_PER_INSERT) await flushRows();
  };
  for (let i = 0; i < heavyCount; i++) await add(HEAVY, `peer${i % PEERS_OF_HEAVY}@${HOST}`, i);
  for (let o = 0; o < ordinaryOwners && n < total; o++) {
    for (let i = 0; i < PER_ORDINARY_OWNER && n < total; i++) await add(ordinaryName(o), `${ordinaryName((o + 1 + (i % 20)) % ordinaryOwners)}@${HOST}`, i);
    if (o % 100 === 0) process.stdout.write(`\r  filled ${n} rows`);
  }
  await flushRows();
  await tx?.commit();
  process.stdout.write(`\r  filled ${n} rows in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return Date.now() - started;
}

interface Kind {
  readonly name: string;
  readonly run: () => Promise<unknown>;
}

function quantile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** The query kinds of the benchmark for one owner whose archive holds `size` messages. */
async function kinds(store: ArchiveStore, knex: Knex, user: string, size: number, firstPeer: string): Promise<Kind[]> {
  const owner = { user, host: HOST } as never;
  const page = (filter: ArchiveFilter, request: Partial<PageRequest>) => store.page(owner, filter, { limit: PAGE, backwards: false, ...request });
  const middle: { stanza_id: string } = await knex(MAM_TABLE).where({ host: HOST, username: user, created_at: START_MS + Math.floor(size / 2) * 1000 }).first('stanza_id');
  return [
    { name: 'first page', run: () => page({}, {}) },
    { name: 'last page (RSM before)', run: () => page({}, { backwards: true }) },
    { name: 'with filter, first page', run: () => page({ with: { bare: firstPeer } }, {}) },
    { name: 'with filter, last page', run: () => page({ with: { bare: firstPeer } }, { backwards: true }) },
    {
      name: 'after-id in the middle',
      run: async () => page({ after: (await store.cursorOf(owner, middle.stanza_id))! }, {}),
    },
    { name: 'start/end range in the middle', run: () => page({ start: START_MS + Math.floor(size / 3) * 1000, end: START_MS + Math.floor((2 * size) / 3) * 1000 }, {}) },
  ];
}

interface Timing {
  owner: string;
  archive: number;
  kind: string;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
  count: number;
  index: number;
}

/** The owners whose pages are timed: the heavy one, and an ordinary one from the middle. */
function measuredOwners(): Array<{ user: string; size: number; peer: string }> {
  return [
    { user: HEAVY, size: heavyCount, peer: `peer0@${HOST}` },
    { user: ordinaryName(Math.floor(ordinaryOwners / 2)), size: PER_ORDINARY_OWNER, peer: `${ordinaryName((Math.floor(ordinaryOwners / 2) + 1) % ordinaryOwners)}@${HOST}` },
  ];
}

async function measure(store: ArchiveStore, knex: Knex): Promise<Timing[]> {
  const owners = measuredOwners();
  const timings: Timing[] = [];
  for (const o of owners) {
    const list = await kinds(store, knex, o.user, o.size, o.peer);
    const samples = list.map(() => [] as number[]);
    const last = list.map(() => ({ count: 0, index: 0 }));
    // Warm-up: the first runs read the pages into the cache, as a server that has been up would have them.
    for (const k of list) for (let i = 0; i < 5; i++) await k.run();
    for (let r = 0; r < runs; r++) {
      for (let k = 0; k < list.length; k++) {
        const t0 = process.hrtime.bigint();
        const result = (await list[k]!.run()) as { count: number; index: number; messages: unknown[] };
        samples[k]!.push(Number(process.hrtime.bigint() - t0) / 1e6);
        last[k] = { count: result.count, index: result.index };
        if (result.messages.length === 0) throw new Error(`${list[k]!.name} of ${o.user}: an empty page`);
      }
    }
    list.forEach((k, i) => {
      const sorted = samples[i]!.sort((a, b) => a - b);
      timings.push({ owner: o.user, archive: o.size, kind: k.name, medianMs: round(quantile(sorted, 0.5)), p99Ms: round(quantile(sorted, 0.99)), maxMs: round(sorted[sorted.length - 1]!), ...last[i]! });
    });
  }
  return timings;
}

const round = (x: number) => Math.round(x * 100) / 100;

/** The query kinds through a real client: the same pages as `kinds`, as MAM IQs. */
function xmppKinds(size: number, firstPeer: string, middleId: string): Array<{ name: string; query: string }> {
  const form = (fields: Record<string, string>) =>
    `<x xmlns='jabber:x:data' type='submit'><field var='FORM_TYPE' type='hidden'><value>urn:xmpp:mam:2</value></field>${Object.entries(fields)
      .map(([k, v]) => `<field var='${k}'><value>${v}</value></field>`)
      .join('')}</x>`;
  const rsm = (inner = '') => `<set xmlns='http://jabber.org/protocol/rsm'><max>${PAGE}</max>${inner}</set>`;
  const iso = (i: number) => new Date(START_MS + i * 1000).toISOString();
  return [
    { name: 'first page', query: `${form({})}${rsm()}` },
    { name: 'last page (RSM before)', query: `${form({})}${rsm('<before/>')}` },
    { name: 'with filter, first page', query: `${form({ with: firstPeer })}${rsm()}` },
    { name: 'with filter, last page', query: `${form({ with: firstPeer })}${rsm('<before/>')}` },
    { name: 'after-id in the middle', query: `${form({ 'after-id': middleId })}${rsm()}` },
    { name: 'start/end range in the middle', query: `${form({ start: iso(Math.floor(size / 3)), end: iso(Math.floor((2 * size) / 3)) })}${rsm()}` },
  ];
}

/**
 * The XMPP part: the server started on the SQLite file in `dir`, accounts for the two owners, and each
 * query kind timed from the IQ's write to the IQ result's arrival (after the page's messages).
 */
async function measureXmpp(dir: string, owners: Array<{ user: string; size: number; peer: string; middleId: string }>): Promise<Timing[]> {
  const httpPort = await freePort();
  const c2sPort = await freePort();
  const config = c2sConfig({ httpPort, c2sPort, dataDir: dir, loglevel: 'warning', mode: 'tls', modules: 'api' });
  config.modules = { mod_http_api: {}, mod_admin_extra: {}, mod_mam: { default: 'always' } };
  const configFile = join(dir, 'config.yml');
  await writeConfig(configFile, config);
  const server = await startServer({ configFile, port: httpPort, logFile: join(dir, 'server.log') });
  const timings: Timing[] = [];
  try {
    await seedAccounts(join(dir, 'service.db'), { count: 0, adminPassword: 'adminpass', userPassword: 'unused' });
    for (const o of owners) {
      const res = await callApi(httpPort, 'register', { user: o.user, host: HOST, password: `${o.user}-pw` }, basicAuth(ADMIN_JID, 'adminpass'));
      if (res.status !== 200) throw new Error(`register ${o.user}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    for (const o of owners) {
      // A fresh connection every few queries: the test peer keeps everything it ever received and searches
      // it on each chunk, which after a few hundred pages would cost more than the queries themselves.
      let peer: RawXmppPeer | undefined;
      let onThisPeer = 0;
      const connected = async (): Promise<RawXmppPeer> => {
        if (peer && onThisPeer < QUERIES_PER_CONNECTION) return peer;
        peer?.destroy();
        peer = await RawXmppPeer.connect(c2sPort);
        await peer.login(o.user, `${o.user}-pw`, { resource: 'bench' });
        onThisPeer = 0;
        return peer;
      };
      try {
        const list = xmppKinds(o.size, o.peer, o.middleId);
        const samples = list.map(() => [] as number[]);
        let n = 0;
        const run = async (query: string): Promise<number> => {
          const peer = await connected();
          onThisPeer++;
          const id = `q${++n}`;
          peer.resetReceived();
          const t0 = process.hrtime.bigint();
          peer.write(`<iq type='set' id='${id}'><query xmlns='urn:xmpp:mam:2' queryid='${id}'>${query}</query></iq>`);
          const answer = await peer.waitFor(new RegExp(`<iq\\b[^>]*\\bid=['"]${id}['"][^>]*>[\\s\\S]*?</iq>`), 30_000);
          const ms = Number(process.hrtime.bigint() - t0) / 1e6;
          if (!/type=['"]result['"]/.test(answer[0])) throw new Error(`query ${id} of ${o.user} failed: ${answer[0].slice(0, 300)}`);
          const results = peer.received.split('<result ').length - 1;
          if (results !== PAGE) throw new Error(`query ${id} of ${o.user}: ${results} results, expected ${PAGE}`);
          return ms;
        };
        for (const k of list) for (let i = 0; i < 5; i++) await run(k.query);
        for (let r = 0; r < runs; r++) for (let k = 0; k < list.length; k++) samples[k]!.push(await run(list[k]!.query));
        list.forEach((k, i) => {
          const sorted = samples[i]!.sort((a, b) => a - b);
          timings.push({ owner: o.user, archive: o.size, kind: k.name, medianMs: round(quantile(sorted, 0.5)), p99Ms: round(quantile(sorted, 0.99)), maxMs: round(sorted[sorted.length - 1]!), count: -1, index: -1 });
        });
      } finally {
        peer?.destroy();
      }
    }
  } finally {
    await server.stop();
  }
  return timings;
}

async function benchOne(type: DbType): Promise<{ db: DbType; fillMs: number; timings: Timing[]; xmpp?: Timing[] }> {
  console.log(`${type}: ${total} messages, ${heavyCount} for ${HEAVY}, ${ordinaryOwners} owners of ${PER_ORDINARY_OWNER}`);
  const dir = await mkdtemp(join(tmpdir(), 'bench-mam-'));
  const { settings, drop } = await scratchDatabase(type, dir, 'service.db');
  const storage = await Storage.open({ sql: settings, dataDir: dir, defaultDb: 'sql' }, logger as never);
  try {
    await storage.migrate('mod_mam', MAM_MIGRATIONS, 'sql');
    const knex = storage.db('sql');
    const fillMs = await fill(knex);
    // A settled table, as autovacuum keeps it: its visibility map lets index-only scans skip the heap.
    if (type === 'pgsql') await knex.raw(`vacuum analyze ${MAM_TABLE}`);
    if (type === 'mysql') await knex.raw(`analyze table ${MAM_TABLE}`);
    if (type === 'sqlite') await knex.raw('analyze');
    const timings = await measure(new ArchiveStore(knex as never), knex);
    for (const t of timings) console.log(`  ${t.owner.padEnd(12)} ${t.kind.padEnd(32)} median ${String(t.medianMs).padStart(7)} ms   p99 ${String(t.p99Ms).padStart(7)} ms   (count ${t.count}, index ${t.index})`);
    if (type !== 'sqlite' || opts['no-xmpp']) return { db: type, fillMs, timings };
    const owners = [];
    for (const o of measuredOwners()) {
      const middle: { stanza_id: string } = await knex(MAM_TABLE).where({ host: HOST, username: o.user, created_at: START_MS + Math.floor(o.size / 2) * 1000 }).first('stanza_id');
      owners.push({ ...o, middleId: middle.stanza_id });
    }
    await storage.close();
    console.log('  through the server (XMPP):');
    const xmpp = await measureXmpp(dir, owners);
    for (const t of xmpp) console.log(`  ${t.owner.padEnd(12)} ${t.kind.padEnd(32)} median ${String(t.medianMs).padStart(7)} ms   p99 ${String(t.p99Ms).padStart(7)} ms`);
    return { db: type, fillMs, timings, xmpp };
  } finally {
    await storage.close();
    if (!opts.keep) {
      await drop();
      await rm(dir, { recursive: true, force: true });
    } else console.log(`  kept ${type === 'sqlite' ? dir : settings.database}`);
  }
}

const results = [];
for (const type of dbTypes) results.push(await benchOne(type));

const when = new Date().toISOString();
const lines = [
  `# mod_mam page queries, ${total} archived messages (${when})`,
  '',
  `Machine: ${JSON.stringify(machineInfo())}`,
  '',
  `Heavy owner: ${heavyCount} messages with ${PEERS_OF_HEAVY} peers; ${ordinaryOwners} other owners of ${PER_ORDINARY_OWNER}. Pages of ${PAGE}; ${runs} runs of each kind, interleaved, after 5 warm-up runs. Through ArchiveStore.page (count and index included).`,
  '',
  '| database | path | owner (archive) | query | median ms | p99 ms | max ms |',
  '|---|---|---|---|---:|---:|---:|',
  ...results.flatMap((r) => [
    ...r.timings.map((t) => `| ${r.db} | store | ${t.owner} (${t.archive}) | ${t.kind} | ${t.medianMs} | ${t.p99Ms} | ${t.maxMs} |`),
    ...(r.xmpp ?? []).map((t) => `| ${r.db} | XMPP | ${t.owner} (${t.archive}) | ${t.kind} | ${t.medianMs} | ${t.p99Ms} | ${t.maxMs} |`),
  ]),
  '',
  ...results.map((r) => `Fill on ${r.db}: ${(r.fillMs / 1000).toFixed(1)} s.`),
];
await mkdir(RESULTS_DIR, { recursive: true });
const base = join(RESULTS_DIR, `mam-${when.replace(/[:.]/g, '-')}`);
await writeFile(`${base}.json`, JSON.stringify({ when, machine: machineInfo(), total, heavyCount, ordinaryOwners, runs, results }, null, 2));
await writeFile(`${base}.md`, lines.join('\n') + '\n');
console.log(`\n${lines.join('\n')}\n\nwritten to ${relative(REPO, base)}.md and .json`);
