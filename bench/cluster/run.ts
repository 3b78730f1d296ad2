/**
 * Benchmark of a cluster (mod_cluster) on this machine: N node processes on loopback sharing a fresh
 * MariaDB database and the local Redis, with config.example.yml's modules plus mod_cluster, driven by
 * bench/c2s's load generator.
 *
 *   node --import tsx bench/cluster/run.ts [--nodes 3] [--sessions 15000] [--pairs 200]
 *                                          [--rates 2000,5000,10000,…] [--duration 5] [--warmup 2] [--workers 4]
 *                                          [--layouts 'cross-node,one node']
 *
 *   1. sessions: `--sessions` per node (SCRAM-SHA-256, no TLS), each node's RSS after a full GC, per session;
 *   2. one-to-one messages between two nodes (senders on node 1, receivers on node 2) and, side by side, on one
 *      node (both on node 1), at increasing rates until p99 is over 200 ms twice in a row: the highest rate under it;
 *   3. the time to detect a dead node: SIGKILL of the last node, until list_cluster on node 1 leaves it out.
 * Prints markdown tables and writes bench/results/cluster-<time>.json.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import knex from 'knex';
import mysql from 'mysql2/promise';
import { HOST, RESULTS_DIR, SCRAM_JS, callApi, exampleModules, freePort, machineInfo, percentile, requireBuild, round1, round2, seedUsername, sleep, writeConfig } from '../api/lib.js';
import { TLS_CERT, forkWorkers, startC2sServer, stopWorkers, type C2sServer, type Worker } from '../c2s/lib.js';
import type { ChatResult, ConnectResult } from '../c2s/worker.js';

const { values: opts } = parseArgs({
  options: {
    nodes: { type: 'string', default: '3' },
    sessions: { type: 'string', default: '15000' },
    pairs: { type: 'string', default: '200' },
    rates: { type: 'string', default: '2000,5000,10000,15000,20000,25000,30000' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    workers: { type: 'string', default: '4' },
    /** Which message layouts to run (one alone, to profile it): cross-node, one-node. */
    layouts: { type: 'string', default: 'cross-node,one node' },
  },
});
const NODES = Number(opts.nodes);
const SESSIONS = Number(opts.sessions);
const PAIRS = Number(opts.pairs);
const RATES = opts.rates.split(',').map(Number);
const DURATION_S = Number(opts.duration);
const WARMUP_S = Number(opts.warmup);
const WORKERS = Number(opts.workers);
const PASSWORD = 'bench-pw';
const P99_LIMIT = 200;
const MYSQL = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };

const log = (text: string) => console.error(`[bench cluster] ${text}`);

interface Node {
  readonly name: string;
  readonly http: number;
  readonly c2s: number;
  server: C2sServer;
}

async function main(): Promise<void> {
  requireBuild();
  if (NODES < 2) throw new Error('--nodes: at least 2');
  const database = `svc_bench_${randomBytes(4).toString('hex')}`;
  const admin = await mysql.createConnection(MYSQL);
  await admin.query(`create database ${database}`);
  const dir = await mkdtemp(join(tmpdir(), 'bench-cluster-'));
  const cluster = `bench${randomBytes(3).toString('hex')}`;
  const nodes: Node[] = [];
  let workers: Worker[] = [];
  try {
    for (let i = 0; i < NODES; i++) {
      const node: Node = { name: `service@node${i + 1}`, http: await freePort(), c2s: await freePort(), server: undefined as unknown as C2sServer };
      const config = {
        hosts: [HOST],
        loglevel: 'warning',
        node_name: node.name,
        data_dir: join(dir, `node${i + 1}`),
        sql_type: 'mysql',
        sql_server: MYSQL.host,
        sql_port: MYSQL.port,
        sql_database: database,
        sql_username: MYSQL.user,
        sql_password: MYSQL.password,
        default_db: 'sql',
        auth_method: 'sql',
        auth_password_format: 'scram',
        certfiles: [TLS_CERT],
        listen: [
          { port: node.http, ip: '127.0.0.1', module: 'service_http', request_handlers: { '/api': 'mod_http_api' } },
          { port: node.c2s, ip: '127.0.0.1', module: 'service_c2s', starttls: true, starttls_required: false },
        ],
        acl: { loopback: { ip: ['127.0.0.0/8'] } },
        api_permissions: { 'loopback admin': { who: { acl: 'loopback' }, what: '*' } },
        modules: { ...exampleModules(), mod_cluster: { cluster, cookie: 'bench-cookie', heartbeat_interval: 1000, heartbeat_timeout: 5000 } },
      };
      await mkdir(config.data_dir, { recursive: true });
      const file = join(dir, `node${i + 1}.yml`);
      await writeConfig(file, config);
      node.server = await startC2sServer({ configFile: file, httpPort: node.http, logFile: join(dir, `node${i + 1}.log`), readyTimeoutMs: 60_000 });
      nodes.push(node);
      if (i === 0) {
        const seeded = await seed(database, NODES * SESSIONS + 2 * PAIRS);
        log(`seeded ${seeded} accounts`);
      }
    }
    log(`${NODES} nodes up: ${(await callApi(nodes[0]!.http, 'list_cluster', {})).body.join(', ')}`);

    // 1. Sessions on every node.
    workers = forkWorkers(WORKERS);
    await Promise.all(workers.map((w) => w.call({ type: 'init', port: nodes[0]!.c2s, domain: HOST, password: PASSWORD, localAddress: w.localAddress, tls: false, caFile: '' })));
    const baseline = await Promise.all(nodes.map((n) => n.server.memory()));
    let nextUser = 2 * PAIRS;
    for (const node of nodes) {
      const users = Array.from({ length: SESSIONS }, () => seedUsername(nextUser++));
      const slices = spread(users, workers.length);
      const results = await Promise.all(slices.map((slice, i) => workers[i]!.call<ConnectResult>({ type: 'connect', users: slice, resource: 'idle', concurrency: 25, port: node.c2s })));
      const failed = results.reduce((n, r) => n + r.failed, 0);
      log(`${node.name}: ${SESSIONS - failed} sessions${failed ? ` (${failed} failed: ${results.flatMap((r) => r.errors)[0]})` : ''}`);
    }
    const total = (await callApi(nodes[0]!.http, 'connected_users_number', {})).body as number;
    const memory = await Promise.all(nodes.map((n) => n.server.memory()));
    const perNode = nodes.map((n, i) => ({
      node: n.name,
      rssMiB: round1(memory[i]!.rssMiB),
      perSessionKiB: round2(((memory[i]!.rssMiB - baseline[i]!.rssMiB) * 1024) / SESSIONS),
      heapPerSessionKiB: round2(((memory[i]!.heapUsedMiB - baseline[i]!.heapUsedMiB) * 1024) / SESSIONS),
    }));
    log(`the cluster holds ${total} sessions`);
    await Promise.all(workers.map((w) => w.call({ type: 'close' })));

    // 2. Messages across nodes, and on one node.
    const chatSeries: Record<string, Array<{ rate: number; delivered: number; p99: number; lost: number; ok: boolean }>> = {};
    for (const layout of (['cross-node', 'one node'] as const).filter((l) => opts.layouts.split(',').map((s) => s.trim()).includes(l))) {
      const pairUsers = Array.from({ length: 2 * PAIRS }, (_, i) => seedUsername(i));
      const perWorker = spread(Array.from({ length: PAIRS }, (_, i) => i), workers.length);
      await Promise.all(
        perWorker.map(async (pairs, w) => {
          const senders = pairs.map((i) => pairUsers[2 * i]!);
          const receivers = pairs.map((i) => pairUsers[2 * i + 1]!);
          await workers[w]!.call({ type: 'connect', users: senders, resource: 'chat', concurrency: 10, port: nodes[0]!.c2s });
          await workers[w]!.call({ type: 'connect', users: receivers, resource: 'chat', concurrency: 10, port: layout === 'cross-node' ? nodes[1]!.c2s : nodes[0]!.c2s });
        }),
      );
      const series: (typeof chatSeries)[string] = [];
      for (const rate of RATES) {
        const results = await Promise.all(
          perWorker.map((pairs, w) =>
            workers[w]!.call<ChatResult>({ type: 'chat', pairs: pairs.length, ratePerSender: rate / PAIRS, warmupMs: WARMUP_S * 1000, durationMs: DURATION_S * 1000, drainMs: 3000, halves: true }),
          ),
        );
        const latencies = Float64Array.from(results.flatMap((r) => [...r.latencies])).sort();
        const sent = results.reduce((n, r) => n + r.sent, 0);
        const received = results.reduce((n, r) => n + r.received, 0);
        const windowS = results[0]!.windowMs / 1000;
        const p99 = latencies.length ? percentile(latencies, 99) : Infinity;
        const point = { rate, delivered: round1(received / windowS), p99: round2(p99), lost: sent - received, ok: p99 < P99_LIMIT && sent === received };
        series.push(point);
        log(`${layout}: offered ${rate} msg/s, delivered ${point.delivered}/s, p99 ${point.p99} ms, lost ${point.lost} → ${point.ok ? 'ok' : 'over the limit'}`);
        // One rate over the limit can be a pause of the shared machine (GC, a neighbour's burst): the
        // ladder stops after two in a row, and the highest rate under the limit counts.
        if (!point.ok && series.length >= 2 && !series[series.length - 2]!.ok) break;
      }
      chatSeries[layout] = series;
      await Promise.all(workers.map((w) => w.call({ type: 'close' })));
      await sleep(1000);
    }

    // 3. Detecting a dead node.
    const victim = nodes[nodes.length - 1]!;
    const killedAt = Date.now();
    victim.server.child.kill('SIGKILL');
    let detectedMs = NaN;
    while (Date.now() - killedAt < 30_000) {
      const listed = (await callApi(nodes[0]!.http, 'list_cluster', {})).body as string[];
      if (!listed.includes(victim.name)) {
        detectedMs = Date.now() - killedAt;
        break;
      }
      await sleep(50);
    }
    log(`${victim.name} killed: detected after ${detectedMs} ms (heartbeat_timeout 5000 ms)`);

    const best = (layout: string) => chatSeries[layout]!.filter((p) => p.ok).at(-1);
    const results = { date: new Date().toISOString(), machine: machineInfo(), settings: { nodes: NODES, sessionsPerNode: SESSIONS, pairs: PAIRS, rates: RATES, durationS: DURATION_S }, totalSessions: total, perNode, chat: chatSeries, detectedMs };
    await mkdir(RESULTS_DIR, { recursive: true });
    const out = join(RESULTS_DIR, `cluster-${results.date.replace(/[:.]/g, '-')}.json`);
    await writeFile(out, JSON.stringify(results, null, 2));
    console.log(`\n## Cluster benchmark (${results.date})\n`);
    console.log(`${NODES} nodes, ${SESSIONS} sessions each (${total} in the cluster), MariaDB + Redis, config.example.yml's modules + mod_cluster, no TLS.\n`);
    console.log('| node | RSS MiB | RSS per session KiB | heap per session KiB |\n|---|---:|---:|---:|');
    for (const n of perNode) console.log(`| ${n.node} | ${n.rssMiB} | ${n.perSessionKiB} | ${n.heapPerSessionKiB} |`);
    console.log(`\n| messages (${PAIRS} pairs) | highest rate with p99 < ${P99_LIMIT} ms | p99 there |\n|---|---:|---:|`);
    for (const layout of Object.keys(chatSeries)) console.log(`| ${layout} | ${best(layout)?.delivered ?? '—'} msg/s | ${best(layout)?.p99 ?? '—'} ms |`);
    console.log(`\nDead node detected after ${detectedMs} ms (heartbeat_timeout 5000 ms, interval 1000 ms).\n\nRaw results: ${out}`);
  } finally {
    await stopWorkers(workers).catch(() => {});
    for (const node of nodes) await node.server.stop(2000).catch(() => {});
    await admin.query(`drop database if exists ${database}`).catch(() => {});
    await admin.end();
    if (!process.env.BENCH_KEEP) await rm(dir, { recursive: true, force: true });
  }
}

/** Accounts user0000000… with one SCRAM credential, inserted straight into the shared users table. */
async function seed(database: string, count: number): Promise<number> {
  const scram = (await import(pathToFileURL(SCRAM_JS).href)) as typeof import('../../kernel/src/accounts/scram.js');
  const credential = await scram.createScramCredentials(PASSWORD);
  const columns: Record<string, string | number | null> = { password: null, scram_salt: credential.salt.toString('base64'), scram_iterations: credential.iterations };
  for (const hash of scram.SCRAM_HASHES) {
    const keys = credential.keys[hash];
    columns[`scram_${hash}_stored`] = keys ? keys.storedKey.toString('base64') : null;
    columns[`scram_${hash}_server`] = keys ? keys.serverKey.toString('base64') : null;
  }
  const db = knex({ client: 'mysql2', connection: { ...MYSQL, database } });
  try {
    const now = Date.now();
    for (let start = 0; start < count; start += 2000) {
      const rows = Array.from({ length: Math.min(2000, count - start) }, (_, i) => ({ host: HOST, username: seedUsername(start + i), created_at: now, ...columns }));
      await db('users').insert(rows);
    }
  } finally {
    await db.destroy();
  }
  return count;
}

function spread<T>(items: T[], parts: number): T[][] {
  const out: T[][] = Array.from({ length: parts }, () => []);
  items.forEach((item, i) => out[i % parts]!.push(item));
  return out;
}

await main();
