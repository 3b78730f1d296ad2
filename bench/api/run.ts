/**
 * Benchmark of the HTTP JSON API (mod_http_api) against the real server, run as a child process.
 *
 *   node --import tsx bench/api/run.ts [--duration 10] [--warmup 3] [--connections 1,16,64]
 *                                      [--levels warning,info] [--users 100000] [--auth none,basic,bearer]
 *                                      [--rounds 1] [--skip-wrk] [--keep]
 *
 * With --rounds N, each concurrency runs the status variants N times, interleaved (none, basic, bearer,
 * none, …), and the authentication cost is computed from the medians: single runs on a virtual machine
 * move by 10–15 %, more than what is being measured.
 *
 * For each log level: start `node cli/dist/servicectl.js --config FILE foreground` on a free loopback
 * port; once, seed the accounts straight into SQLite; then, for POST /api/status (anonymous from
 * loopback, HTTP Basic, and an OAuth Bearer token: what authentication costs) and POST
 * /api/registered_users (Basic) at each concurrency, a warm-up and a measured autocannon run (keep-alive,
 * pipelining 1), with the server's CPU use from /proc; then wrk on
 * POST /api/status when wrk is installed. Prints a markdown table and writes the raw results to
 * bench/results/api-<time>.json. See bench/README.md.
 */
import autocannon, { type Result as AutocannonResult } from 'autocannon';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
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
  clkTck,
  callApi,
  cpuBetween,
  cpuSnapshot,
  freePort,
  installWrk,
  machineInfo,
  percentile,
  requireBuild,
  round1,
  round2,
  rssMb,
  runWrk,
  seedAccounts,
  startServer,
  waitQuiet,
  whichWrk,
  wrkScript,
  writeConfig,
  type CpuUse,
  type LogLevel,
  type ServerProcess,
} from './lib.js';

const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '1,16,64' },
    levels: { type: 'string', default: 'warning,info' },
    users: { type: 'string', default: '100000' },
    auth: { type: 'string', default: 'none,basic,bearer' },
    rounds: { type: 'string', default: '1' },
    'skip-wrk': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (opts.help) {
  console.log('usage: node --import tsx bench/api/run.ts [--duration S] [--warmup S] [--connections 1,16,64] [--levels warning,info] [--users N] [--auth none,basic,bearer] [--rounds N] [--skip-wrk] [--keep]');
  process.exit(0);
}

const DURATION = Number(opts.duration);
const WARMUP = Number(opts.warmup);
const CONNECTIONS = opts.connections.split(',').map(Number);
const LEVELS = opts.levels.split(',') as LogLevel[];
const USERS = Number(opts.users);
type Auth = 'none' | 'basic' | 'bearer';
const AUTHS = opts.auth.split(',') as Auth[];
const ROUNDS = Number(opts.rounds);
if (!(ROUNDS >= 1)) {
  console.error('bad arguments: --rounds >= 1');
  process.exit(64);
}
if (AUTHS.some((a) => !['none', 'basic', 'bearer'].includes(a))) {
  console.error('bad arguments: --auth takes none, basic and bearer');
  process.exit(64);
}
if (!(DURATION > 0) || !(WARMUP >= 0) || CONNECTIONS.some((c) => !(c >= 1)) || !(USERS >= 0)) {
  console.error('bad arguments: --duration > 0, --warmup >= 0, --connections positive integers, --users >= 0');
  process.exit(64);
}

const ADMIN_PASSWORD = 'bench-admin-pass';
const AUTH = basicAuth(ADMIN_JID, ADMIN_PASSWORD);

interface Endpoint {
  name: string;
  command: string;
  body: string;
  /** none: anonymous from loopback (api_permissions' public group); basic: admin's password; bearer: an OAuth token. */
  auth: Auth;
}

const ENDPOINTS: Endpoint[] = [
  ...AUTHS.map((auth): Endpoint => ({ name: `POST /api/status (${auth})`, command: 'status', body: '{}', auth })),
  { name: 'POST /api/registered_users (basic)', command: 'registered_users', body: JSON.stringify({ host: HOST }), auth: 'basic' },
];

/** The Bearer token of the running server (issued after each start, service:admin for admin@localhost). */
let bearerToken = '';

function authorization(auth: Auth): Record<string, string> {
  if (auth === 'basic') return { authorization: AUTH };
  if (auth === 'bearer') return { authorization: `Bearer ${bearerToken}` };
  return {};
}

interface Row {
  tool: 'autocannon' | 'wrk';
  loglevel: LogLevel;
  endpoint: string;
  connections: number;
  threads?: number;
  durationS: number;
  requests: number;
  reqPerSec: number;
  /** Exact, from every 2xx response's time (autocannon's own histogram has 1 ms resolution). */
  latencyMs: { mean: number; p50: number; p90: number; p99: number; max: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  responseBytes?: number;
  cpu: CpuUse & {
    /** The load generator's CPU, percent of one core (autocannon: this process; wrk: its own /proc/self/stat). */
    generatorPct: number;
    /** Everything else on the machine during the run: noise from other work when well above zero. */
    otherPct: number;
  };
  /** Machine CPU use seen just before the warm-up, percent of one core. */
  backgroundPct?: number;
  serverRssMb?: number;
  raw?: unknown;
}

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

/** Before each warm-up: wait (up to 2 min) for the machine to be idle apart from the idle server. */
const quiet = () => waitQuiet(25, 120, (pct) => log(`  the machine is busy (${pct}% of a core, the idle server included): waiting for it to calm down`));

async function measureAutocannon(server: ServerProcess, endpoint: Endpoint, connections: number, level: LogLevel): Promise<Row> {
  const options = {
    url: `http://127.0.0.1:${server.port}/api/${endpoint.command}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authorization(endpoint.auth) },
    body: endpoint.body,
    connections,
    pipelining: 1,
    timeout: 60,
  };
  const backgroundPct = await quiet();
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
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([k, v]) => [k, v.count]));
  const requests = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  return {
    tool: 'autocannon',
    backgroundPct,
    loglevel: level,
    endpoint: endpoint.name,
    connections,
    durationS: result.duration,
    requests,
    reqPerSec: round1(result.requests.mean),
    latencyMs: {
      mean: round2(mean),
      p50: round2(percentile(sorted, 50)),
      p90: round2(percentile(sorted, 90)),
      p99: round2(percentile(sorted, 99)),
      max: round2(sorted.length ? sorted[sorted.length - 1]! : NaN),
    },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    cpu: withOther(cpu, cpu.benchProcessPct),
    serverRssMb: rssMb(server.pid),
    raw: { ...result, statusCodeStats: result.statusCodeStats },
  };
}

async function measureWrk(server: ServerProcess, wrk: string, script: string, connections: number, level: LogLevel, auth: Auth): Promise<Row> {
  const threads = Math.min(2, connections);
  const url = `http://127.0.0.1:${server.port}/api/status`;
  const backgroundPct = await quiet();
  if (WARMUP > 0) await runWrk(wrk, { url, script, threads, connections, durationS: WARMUP });
  const before = cpuSnapshot(server.pid);
  const r = await runWrk(wrk, { url, script, threads, connections, durationS: DURATION });
  const after = cpuSnapshot(server.pid);
  const seconds = r.duration_us / 1e6;
  const ms = (us: number) => round2(us / 1000);
  const socketErrors = r.errors.connect + r.errors.read + r.errors.write;
  return {
    tool: 'wrk',
    backgroundPct,
    loglevel: level,
    endpoint: `POST /api/status (${auth})`,
    connections,
    threads,
    durationS: round2(seconds),
    requests: r.requests,
    reqPerSec: round1(r.requests / seconds),
    latencyMs: { mean: ms(r.latency_us.mean), p50: ms(r.latency_us.p50), p90: ms(r.latency_us.p90), p99: ms(r.latency_us.p99), max: ms(r.latency_us.max) },
    errors: socketErrors,
    timeouts: r.errors.timeout,
    non2xx: r.errors.status,
    statusCodes: {},
    cpu: withOther(cpuBetween(before, after), r.cpu_ticks >= 0 ? round1((r.cpu_ticks / clkTck() / seconds) * 100) : NaN),
    serverRssMb: rssMb(server.pid),
    raw: r,
  };
}

function withOther(cpu: CpuUse, generatorPct: number): Row['cpu'] {
  const otherPct = Number.isNaN(generatorPct) ? NaN : round1(Math.max(0, cpu.machinePct - cpu.serverProcessPct - generatorPct));
  return { ...cpu, generatorPct, otherPct };
}

function table(rows: Row[]): string {
  const head = [
    'log level',
    'tool',
    'endpoint',
    'conns',
    'req/s',
    'p50 ms',
    'p99 ms',
    'errors',
    'non-2xx',
    'server CPU % (process)',
    'server CPU % (main thread)',
    'load generator CPU %',
    'other CPU %',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i >= 3 ? '---:' : '---')).join('|')}|`];
  for (const r of rows) {
    lines.push(
      `| ${r.loglevel} | ${r.tool}${r.threads ? ` -t${r.threads}` : ''} | ${r.endpoint} | ${r.connections} | ${r.reqPerSec.toLocaleString('en-US')} | ${r.latencyMs.p50} | ${r.latencyMs.p99} | ${r.errors + r.timeouts} | ${r.non2xx} | ${r.cpu.serverProcessPct} | ${r.cpu.serverMainThreadPct} | ${r.cpu.generatorPct} | ${r.cpu.otherPct} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  requireBuild();
  const dir = await mkdtemp(join(tmpdir(), 'bench-api-'));
  const dataDir = join(dir, 'data');
  const configFile = join(dir, 'service.yml');
  const port = await freePort();
  const rows: Row[] = [];
  const notes: string[] = [];
  const logBytes: Record<string, number> = {};
  let wrk = opts['skip-wrk'] ? undefined : whichWrk();
  if (!wrk && !opts['skip-wrk']) {
    log('wrk is not installed: trying apt-get install -y wrk once');
    const installed = installWrk();
    wrk = installed.path;
    if (installed.failure) notes.push(`wrk not run: ${installed.failure}`);
  }

  let server: ServerProcess | undefined;
  let seeded: { inserted: number; ms: number } | undefined;
  const started = new Date();
  try {
    for (const level of LEVELS) {
      await writeConfig(configFile, benchConfig({ port, dataDir, loglevel: level }));
      log(`starting the server (loglevel ${level}) on 127.0.0.1:${port}, data in ${dataDir}`);
      server = await startServer({ configFile, port, logFile: join(dir, `server-${level}.log`) });
      if (!seeded) {
        seeded = await seedAccounts(join(dataDir, 'service.db'), { count: USERS, adminPassword: ADMIN_PASSWORD, userPassword: 'bench-user-pass' });
        log(`seeded ${seeded.inserted} accounts in ${Math.round(seeded.ms)} ms`);
      }
      const check = await callApi(port, 'registered_users', { host: HOST }, AUTH);
      if (check.status !== 200 || !Array.isArray(check.body) || check.body.length !== USERS + 1) {
        throw new Error(`registered_users answered ${check.status} with ${Array.isArray(check.body) ? `${check.body.length} names` : JSON.stringify(check.body).slice(0, 300)}; expected ${USERS + 1} names`);
      }
      log(`registered_users lists ${check.body.length} names (${check.bytes} bytes)`);
      const status = await callApi(port, 'status', {}, AUTH);
      if (status.status !== 200) throw new Error(`status answered ${status.status}: ${JSON.stringify(status.body)}`);
      const issued = await callApi(port, 'oauth_issue_token', { jid: ADMIN_JID, ttl: 3600, scopes: ['service:admin'] }, AUTH);
      if (issued.status !== 200) throw new Error(`oauth_issue_token answered ${issued.status}: ${JSON.stringify(issued.body)}`);
      bearerToken = issued.body.token;
      const viaToken = await callApi(port, 'status', {}, `Bearer ${bearerToken}`);
      if (viaToken.status !== 200) throw new Error(`status with the Bearer token answered ${viaToken.status}: ${JSON.stringify(viaToken.body)}`);

      const statusVariants = ENDPOINTS.filter((e) => e.command === 'status');
      const others = ENDPOINTS.filter((e) => e.command !== 'status');
      // The status variants interleaved, round after round, so that drift of the machine hits them alike.
      const plan: Endpoint[] = [...Array.from({ length: ROUNDS }, () => statusVariants).flat(), ...others];
      for (const connections of CONNECTIONS) {
        for (const endpoint of plan) {
          log(`autocannon ${endpoint.name} c=${connections} (${WARMUP}s warm-up + ${DURATION}s)`);
          const row = await measureAutocannon(server, endpoint, connections, level);
          if (endpoint.command === 'registered_users') row.responseBytes = check.bytes;
          rows.push(row);
          log(`  ${row.reqPerSec} req/s, p50 ${row.latencyMs.p50} ms, p99 ${row.latencyMs.p99} ms, server CPU ${row.cpu.serverProcessPct}% (main thread ${row.cpu.serverMainThreadPct}%)`);
        }
      }
      if (wrk) {
        // wrk's C load costs the shared 2 cores far less than autocannon: its figures show the server's own cost.
        const scripts = new Map<Auth, string>();
        for (const auth of AUTHS) {
          const file = join(dir, `status-${auth}.lua`);
          await writeFile(file, wrkScript('{}', authorization(auth).authorization ?? ''));
          scripts.set(auth, file);
        }
        for (const connections of CONNECTIONS) {
          for (const auth of Array.from({ length: ROUNDS }, () => AUTHS).flat()) {
            log(`wrk POST /api/status (${auth}) c=${connections} (${WARMUP}s warm-up + ${DURATION}s)`);
            const row = await measureWrk(server, wrk, scripts.get(auth)!, connections, level, auth);
            rows.push(row);
            log(`  ${row.reqPerSec} req/s, p50 ${row.latencyMs.p50} ms, p99 ${row.latencyMs.p99} ms, server CPU ${row.cpu.serverProcessPct}% (main thread ${row.cpu.serverMainThreadPct}%)`);
          }
        }
      }
      const code = await server.stop();
      server = undefined;
      const logged = await stat(join(dir, `server-${level}.log`)).catch(() => undefined);
      logBytes[level] = logged?.size ?? 0;
      if (code !== 0) notes.push(`the server (loglevel ${level}) exited with code ${code} on SIGINT`);
    }
  } finally {
    if (server) await server.stop().catch(() => null);
    if (!opts.keep) await rm(dir, { recursive: true, force: true });
    else log(`kept ${dir}`);
  }

  const md = table(rows);
  const machine = machineInfo();
  console.log(`\n## HTTP API benchmark (${started.toISOString()})\n`);
  console.log(`${machine.cpuModel}, ${machine.cores} cores, ${machine.ramGiB} GiB, Node ${machine.node}, ${machine.os}`);
  console.log(`${USERS + 1} accounts on ${HOST}; ${DURATION}s runs after ${WARMUP}s warm-up; keep-alive, pipelining 1; Basic and Bearer as ${ADMIN_JID} (token look-up cache on, the default)\n`);
  console.log(md);
  console.log(
    `\nCPU % is of one core (this machine has ${machine.cores}). "main thread" is the server's event loop thread alone. ` +
      'autocannon runs inside this benchmark process; wrk reports its own CPU. "other" is the rest of the machine: well above 0, the run shared the machine with other work.',
  );
  for (const [level, bytes] of Object.entries(logBytes)) {
    const requests = rows.filter((r) => r.loglevel === level).reduce((sum, r) => sum + r.requests, 0);
    console.log(`\nServer log at ${level}: ${bytes.toLocaleString('en-US')} bytes for about ${requests.toLocaleString('en-US')} measured requests (plus warm-ups).`);
  }
  for (const level of LEVELS) {
    for (const connections of CONNECTIONS) {
      for (const tool of ['wrk', 'autocannon'] as const) {
        const rate = (auth: Auth): number | undefined => {
          const rates = rows
            .filter((r) => r.tool === tool && r.loglevel === level && r.connections === connections && r.endpoint === `POST /api/status (${auth})`)
            .map((r) => r.reqPerSec);
          return rates.length ? percentile(Float64Array.from(rates).sort(), 50) : undefined;
        };
        const none = rate('none');
        const basic = rate('basic');
        const bearer = rate('bearer');
        const cost = (other: number | undefined) => (none && other ? `${round1((1 - other / none) * 100)}% (${other.toLocaleString('en-US')} req/s)` : 'n/a');
        if (none && (basic || bearer)) {
          console.log(
            `\nAuthentication cost on status with ${tool} at ${level}, c=${connections}${ROUNDS > 1 ? `, medians of ${ROUNDS} interleaved runs` : ''}: ` +
              `anonymous ${none.toLocaleString('en-US')} req/s; Basic ${cost(basic)}; Bearer ${cost(bearer)} below it.`,
          );
        }
      }
    }
  }
  const noisy = rows.filter((r) => r.cpu.otherPct > 15);
  if (noisy.length) notes.push(`${noisy.length} run(s) shared the machine with other work (other CPU > 15% of a core): ${noisy.map((r) => `${r.loglevel} ${r.tool} ${r.endpoint} c=${r.connections}`).join('; ')}`);
  for (const n of notes) console.log(`\nNote: ${n}`);

  await mkdir(RESULTS_DIR, { recursive: true });
  const out = join(RESULTS_DIR, `api-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(
    out,
    `${JSON.stringify({ startedAt: started.toISOString(), machine, settings: { durationS: DURATION, warmupS: WARMUP, connections: CONNECTIONS, levels: LEVELS, users: USERS, seeded }, logBytes, notes, rows }, null, 2)}\n`,
  );
  console.log(`\nRaw results: ${relative(REPO, out)}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
