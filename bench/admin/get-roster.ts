/**
 * Benchmark of mod_admin_extra's get_roster on a large roster, against the real server run as a child
 * process (the same harness as bench/api: bench/api/lib.ts).
 *
 *   node --import tsx bench/admin/get-roster.ts [--contacts 1000] [--duration 10] [--warmup 3]
 *                                               [--connections 1,16] [--keep]
 *
 * Starts `node cli/dist/servicectl.js --config FILE foreground` with mod_admin_extra and mod_roster on
 * SQLite (log level warning); seeds `contacts + 1` accounts straight into the `users` table and one
 * roster of `contacts` items (subscription both, a name, one of ten groups) straight into roster_items
 * and roster_groups; checks that get_roster lists them all; then, at each concurrency, a warm-up and a
 * measured autocannon run of POST /api/get_roster (HTTP Basic as admin@localhost), and the same for
 * get_roster_count (the cost of the command path without the roster). Prints a markdown table and
 * writes the raw results to bench/results/admin-get-roster-<time>.json.
 */
import autocannon, { type Result as AutocannonResult } from 'autocannon';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import {
  ADMIN_JID,
  HOST,
  REPO,
  RESULTS_DIR,
  basicAuth,
  benchConfig,
  callApi,
  cpuBetween,
  cpuSnapshot,
  freePort,
  machineInfo,
  percentile,
  requireBuild,
  round1,
  round2,
  rssMb,
  seedAccounts,
  seedUsername,
  startServer,
  waitQuiet,
  writeConfig,
  type CpuUse,
  type ServerProcess,
} from '../api/lib.js';

const { values: opts } = parseArgs({
  options: {
    contacts: { type: 'string', default: '1000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '1,16' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (opts.help) {
  console.log('usage: node --import tsx bench/admin/get-roster.ts [--contacts N] [--duration S] [--warmup S] [--connections 1,16] [--keep]');
  process.exit(0);
}

const CONTACTS = Number(opts.contacts);
const DURATION = Number(opts.duration);
const WARMUP = Number(opts.warmup);
const CONNECTIONS = opts.connections.split(',').map(Number);
if (!(CONTACTS >= 1) || !(DURATION > 0) || !(WARMUP >= 0) || CONNECTIONS.some((c) => !(c >= 1))) {
  console.error('bad arguments: --contacts >= 1, --duration > 0, --warmup >= 0, --connections positive integers');
  process.exit(64);
}

const ADMIN_PASSWORD = 'bench-admin-pass';
const AUTH = basicAuth(ADMIN_JID, ADMIN_PASSWORD);
/** The roster's owner: the first seeded account; its contacts are the others. */
const OWNER = seedUsername(0);
const GROUPS = 10;

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

interface Row {
  command: string;
  connections: number;
  durationS: number;
  requests: number;
  reqPerSec: number;
  latencyMs: { mean: number; p50: number; p90: number; p99: number; max: number };
  errors: number;
  non2xx: number;
  responseBytes: number;
  cpu: CpuUse;
  backgroundPct: number;
  serverRssMb?: number;
}

/**
 * The roster rows, inserted with better-sqlite3 into the running server's database (WAL lets a second
 * writer in), in one transaction: what mod_roster would have stored after `CONTACTS` add_rosteritem calls.
 */
async function seedRoster(dbFile: string): Promise<number> {
  const started = performance.now();
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(dbFile);
  try {
    db.pragma('busy_timeout = 10000');
    const item = db.prepare(
      'insert into roster_items (host, username, jid, nick, subscription, pending_out, pending_in, approved, in_roster) values (?, ?, ?, ?, ?, 0, 0, 0, 1)',
    );
    const group = db.prepare('insert into roster_groups (host, username, jid, group_name) values (?, ?, ?, ?)');
    db.transaction(() => {
      for (let i = 1; i <= CONTACTS; i++) {
        const jid = `${seedUsername(i)}@${HOST}`;
        item.run(HOST, OWNER, jid, `Contact ${i}`, 'both');
        group.run(HOST, OWNER, jid, `Group ${i % GROUPS}`);
      }
    })();
  } finally {
    db.close();
  }
  return performance.now() - started;
}

async function measure(server: ServerProcess, command: string, connections: number, responseBytes: number): Promise<Row> {
  const options = {
    url: `http://127.0.0.1:${server.port}/api/${command}`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', authorization: AUTH },
    body: JSON.stringify({ user: OWNER, host: HOST }),
    connections,
    pipelining: 1,
    timeout: 60,
  };
  const backgroundPct = await waitQuiet(25, 120, (pct) => log(`  the machine is busy (${pct}% of a core, the idle server included): waiting for it to calm down`));
  if (WARMUP > 0) await autocannon({ ...options, duration: WARMUP });
  const latencies: number[] = [];
  const instance = autocannon({ ...options, duration: DURATION });
  let before = cpuSnapshot(server.pid);
  instance.once('start', () => (before = cpuSnapshot(server.pid)));
  instance.on('response', (_client: unknown, status: number, _bytes: number, responseTime: number) => {
    if (status >= 200 && status < 300) latencies.push(responseTime);
  });
  const result: AutocannonResult = await instance;
  const cpu = cpuBetween(before, cpuSnapshot(server.pid));
  const sorted = Float64Array.from(latencies).sort();
  const mean = latencies.reduce((a, b) => a + b, 0) / (latencies.length || 1);
  return {
    command,
    connections,
    durationS: result.duration,
    requests: latencies.length + result.non2xx,
    reqPerSec: round1(result.requests.mean),
    latencyMs: {
      mean: round2(mean),
      p50: round2(percentile(sorted, 50)),
      p90: round2(percentile(sorted, 90)),
      p99: round2(percentile(sorted, 99)),
      max: round2(sorted.length ? sorted[sorted.length - 1]! : NaN),
    },
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    responseBytes,
    cpu,
    backgroundPct,
    serverRssMb: rssMb(server.pid),
  };
}

function table(rows: Row[]): string {
  const head = ['command', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'response bytes', 'errors', 'non-2xx', 'server CPU % (process)', 'server CPU % (main thread)', 'other CPU %'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i >= 1 ? '---:' : '---')).join('|')}|`];
  for (const r of rows) {
    const other = round1(Math.max(0, r.cpu.machinePct - r.cpu.serverProcessPct - r.cpu.benchProcessPct));
    lines.push(
      `| ${r.command} | ${r.connections} | ${r.reqPerSec.toLocaleString('en-US')} | ${r.latencyMs.p50} | ${r.latencyMs.p99} | ${r.responseBytes.toLocaleString('en-US')} | ${r.errors} | ${r.non2xx} | ${r.cpu.serverProcessPct} | ${r.cpu.serverMainThreadPct} | ${other} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  requireBuild();
  const dir = await mkdtemp(join(tmpdir(), 'bench-admin-'));
  const dataDir = join(dir, 'data');
  const configFile = join(dir, 'service.yml');
  const port = await freePort();
  const rows: Row[] = [];
  const started = new Date();
  let server: ServerProcess | undefined;
  try {
    const config = benchConfig({ port, dataDir, loglevel: 'warning' });
    config.modules = { mod_http_api: {}, mod_admin_extra: {}, mod_roster: { max_roster_size: 'infinity' } };
    await writeConfig(configFile, config);
    log(`starting the server on 127.0.0.1:${port}, data in ${dataDir}`);
    server = await startServer({ configFile, port, logFile: join(dir, 'server.log') });
    const dbFile = join(dataDir, 'service.db');
    const accounts = await seedAccounts(dbFile, { count: CONTACTS + 1, adminPassword: ADMIN_PASSWORD, userPassword: 'bench-user-pass' });
    const rosterMs = await seedRoster(dbFile);
    log(`seeded ${accounts.inserted} accounts in ${Math.round(accounts.ms)} ms and a roster of ${CONTACTS} contacts for ${OWNER}@${HOST} in ${Math.round(rosterMs)} ms`);

    const roster = await callApi(port, 'get_roster', { user: OWNER, host: HOST }, AUTH);
    if (roster.status !== 200 || !Array.isArray(roster.body) || roster.body.length !== CONTACTS) {
      throw new Error(`get_roster answered ${roster.status} with ${Array.isArray(roster.body) ? `${roster.body.length} contacts` : JSON.stringify(roster.body).slice(0, 300)}; expected ${CONTACTS}`);
    }
    const count = await callApi(port, 'get_roster_count', { user: OWNER, host: HOST }, AUTH);
    if (count.status !== 200 || count.body !== CONTACTS) throw new Error(`get_roster_count answered ${count.status} ${JSON.stringify(count.body)}; expected ${CONTACTS}`);
    log(`get_roster lists ${roster.body.length} contacts (${roster.bytes} bytes)`);

    for (const [command, bytes] of [
      ['get_roster', roster.bytes],
      ['get_roster_count', count.bytes],
    ] as const) {
      for (const connections of CONNECTIONS) {
        log(`autocannon ${command} c=${connections} (${WARMUP}s warm-up + ${DURATION}s)`);
        const row = await measure(server, command, connections, bytes);
        rows.push(row);
        log(`  ${row.reqPerSec} req/s, p50 ${row.latencyMs.p50} ms, p99 ${row.latencyMs.p99} ms, server CPU ${row.cpu.serverProcessPct}% (main thread ${row.cpu.serverMainThreadPct}%)`);
      }
    }
    const code = await server.stop();
    server = undefined;
    if (code !== 0) log(`the server exited with code ${code} on SIGINT`);
  } finally {
    if (server) await server.stop().catch(() => null);
    if (!opts.keep) await rm(dir, { recursive: true, force: true });
    else log(`kept ${dir}`);
  }

  const machine = machineInfo();
  console.log(`\n## get_roster benchmark (${started.toISOString()})\n`);
  console.log(`${machine.cpuModel}, ${machine.cores} cores, ${machine.ramGiB} GiB, Node ${machine.node}, ${machine.os}`);
  console.log(`A roster of ${CONTACTS} contacts (subscription both, a name and a group each) on SQLite; ${DURATION}s runs after ${WARMUP}s warm-up; keep-alive, pipelining 1; Basic as ${ADMIN_JID}; log level warning\n`);
  console.log(table(rows));
  console.log('\nCPU % is of one core. "main thread" is the server\'s event loop alone; "other" is the rest of the machine besides the server and autocannon (well above 0: the run shared the machine).');
  await mkdir(RESULTS_DIR, { recursive: true });
  const out = join(RESULTS_DIR, `admin-get-roster-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(out, `${JSON.stringify({ startedAt: started.toISOString(), machine, settings: { contacts: CONTACTS, durationS: DURATION, warmupS: WARMUP, connections: CONNECTIONS }, rows }, null, 2)}\n`);
  console.log(`\nRaw results: ${relative(REPO, out)}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
