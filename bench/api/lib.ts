/**
 * Shared pieces of the HTTP API benchmarks: a throw-away data directory and configuration, the real server
 * started as a child process (`node cli/dist/servicectl.js --config FILE foreground`), direct seeding of the
 * SQLite `users` table, CPU accounting from /proc, wrk, and a .cpuprofile summariser.
 *
 * Nothing here changes the server: it is driven from the outside exactly as an operator would run it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { SourceMap } from 'node:module';
import { cpus, totalmem, release, type } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse, stringify } from 'yaml';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SERVICECTL = join(REPO, 'cli/dist/servicectl.js');
export const SCRAM_JS = join(REPO, 'kernel/dist/accounts/scram.js');
export const RESULTS_DIR = join(REPO, 'bench/results');

export const HOST = 'localhost';
export const ADMIN_USER = 'admin';
export const ADMIN_JID = `${ADMIN_USER}@${HOST}`;

export function requireBuild(): void {
  for (const file of [SERVICECTL, SCRAM_JS]) {
    if (!existsSync(file)) throw new Error(`${relative(REPO, file)} is missing: build first with \`npx tsc -b\` at the repository root`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Configuration

export type LogLevel = 'warning' | 'info' | 'notice' | 'error' | 'debug';

/**
 * config.example.yml with the differences a benchmark needs: one HTTP listener on `port` bound to
 * 127.0.0.1, the given log level, SQLite storage in `dataDir`. The ACLs and api_permissions are the
 * example's: admin@localhost may run everything, loopback may run status without credentials. The modules are
 * the example's too (`modules: 'example'`, what operators run), or only mod_http_api (`'api'`) to measure the
 * kernel's own cost.
 */
export function benchConfig(options: { port: number; dataDir: string; loglevel: LogLevel; modules?: BenchModules }): Record<string, unknown> {
  return {
    hosts: [HOST],
    loglevel: options.loglevel,
    data_dir: options.dataDir,
    listen: [
      {
        port: options.port,
        ip: '127.0.0.1',
        module: 'service_http',
        request_handlers: { '/api': 'mod_http_api' },
        max_body_size: 1048576,
      },
    ],
    default_db: 'sql',
    sql_type: 'sqlite',
    auth_method: 'sql',
    auth_password_format: 'scram',
    // The load generator logs in with SCRAM-SHA-256.
    auth_scram_hash: 'sha256',
    acl: {
      admin: { user: ADMIN_JID },
      loopback: { ip: ['127.0.0.0/8', '::1/128'] },
    },
    access_rules: {
      local: { allow: 'all' },
      trusted_network: { allow: 'loopback' },
    },
    api_permissions: {
      'public commands': { who: { acl: 'loopback' }, what: ['status', 'connected_users_number'] },
      'admin access': { who: [{ acl: 'admin' }, { oauth: { scope: 'service:admin', acl: 'admin' } }], what: '*' },
    },
    oauth_access: 'all',
    modules: options.modules === 'api' ? { mod_http_api: {} } : exampleModules(),
  };
}

/** Which modules a benchmark's server runs: config.example.yml's, or only mod_http_api. */
export type BenchModules = 'example' | 'api';

/** The `modules` section of config.example.yml, as a newcomer's `npm start` runs it. */
export function exampleModules(): Record<string, unknown> {
  const example = parse(readFileSync(join(REPO, 'config.example.yml'), 'utf8')) as { modules?: Record<string, unknown> };
  if (!example.modules?.mod_http_api) throw new Error('config.example.yml enables no mod_http_api: the benchmarks drive the server through it');
  return example.modules;
}

export async function writeConfig(file: string, config: Record<string, unknown>): Promise<void> {
  await writeFile(file, stringify(config));
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ port: 0, host: '127.0.0.1' }, () => {
      const { port } = probe.address() as import('node:net').AddressInfo;
      probe.close(() => resolvePort(port));
    });
  });
}

// ---------------------------------------------------------------------------------------------------------
// The server process

export interface ServerProcess {
  readonly child: ChildProcess;
  /** The node process that runs the server (the child itself: no shell in between). */
  readonly pid: number;
  readonly port: number;
  readonly logFile: string;
  /** process.hrtime in µs just before the spawn (same clock as V8's profile timestamps on Linux). */
  readonly spawnedAtUs: number;
  /** SIGINT, then wait for the exit (SIGKILL after `graceMs`). Resolves to the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

export function hrtimeUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * Starts `node [nodeArgs] cli/dist/servicectl.js --config FILE foreground` with stdout and stderr
 * appended to `logFile` (a file, as in production under a supervisor: a pipe nobody drains would stall
 * pino), and waits until POST /api/status answers anything at all.
 */
export async function startServer(options: {
  configFile: string;
  port: number;
  logFile: string;
  nodeArgs?: string[];
  readyTimeoutMs?: number;
  /** Open an IPC channel to the server process (for a preloaded probe). */
  ipc?: boolean;
}): Promise<ServerProcess> {
  const fd = openSync(options.logFile, 'a');
  const spawnedAtUs = hrtimeUs();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), SERVICECTL, '--config', options.configFile, 'foreground'], {
    cwd: REPO,
    stdio: options.ipc ? ['ignore', fd, fd, 'ipc'] : ['ignore', fd, fd],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  closeSync(fd);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exit = new Promise<number | null>((resolveExit) =>
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolveExit(code);
    }),
  );
  const stop = async (graceMs = 20_000): Promise<number | null> => {
    if (exited) return exited.code;
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    const code = await exit;
    clearTimeout(timer);
    return code;
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (exited) throw new Error(`the server exited during startup (code ${exited.code}, signal ${exited.signal}):\n${tail(options.logFile)}`);
    try {
      const res = await fetch(`http://127.0.0.1:${options.port}/api/status`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      await res.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline) {
        await stop(2000);
        throw new Error(`the server did not answer POST /api/status within the timeout:\n${tail(options.logFile)}`);
      }
      await sleep(50);
    }
  }
  return { child, pid: child.pid!, port: options.port, logFile: options.logFile, spawnedAtUs, stop };
}

export function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function basicAuth(jid: string, password: string): string {
  return `Basic ${Buffer.from(`${jid}:${password}`).toString('base64')}`;
}

export async function callApi(port: number, command: string, args: Record<string, unknown>, authorization?: string): Promise<{ status: number; body: any; bytes: number }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization) headers.authorization = authorization;
  const res = await fetch(`http://127.0.0.1:${port}/api/${command}`, { method: 'POST', headers, body: JSON.stringify(args) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: res.status, body, bytes: Buffer.byteLength(text) };
}

// ---------------------------------------------------------------------------------------------------------
// Seeding

export const SEED_USER_PREFIX = 'user';

export function seedUsername(i: number): string {
  return `${SEED_USER_PREFIX}${String(i).padStart(6, '0')}`;
}

/**
 * Inserts `count` accounts plus admin@localhost straight into the `users` table of the running server's
 * SQLite file (WAL lets a second connection write while the server holds its own). Every seeded account
 * shares one SCRAM credential computed once; admin gets its own, real one, so HTTP Basic works for it.
 * Batched: one transaction per `batch` rows.
 */
export async function seedAccounts(dbFile: string, options: { count: number; adminPassword: string; userPassword: string; batch?: number }): Promise<{ inserted: number; ms: number }> {
  const started = performance.now();
  const scram = (await import(pathToFileURL(SCRAM_JS).href)) as typeof import('../../kernel/src/accounts/scram.js');
  const { default: Database } = await import('better-sqlite3');
  const columnsOf = (c: Awaited<ReturnType<typeof scram.createScramCredentials>>) => {
    const row: Record<string, string | number | null> = {
      password: null,
      scram_salt: c.salt.toString('base64'),
      scram_iterations: c.iterations,
    };
    for (const hash of scram.SCRAM_HASHES) {
      const keys = c.keys[hash];
      row[`scram_${hash}_stored`] = keys ? keys.storedKey.toString('base64') : null;
      row[`scram_${hash}_server`] = keys ? keys.serverKey.toString('base64') : null;
    }
    return row;
  };
  const [adminCred, userCred] = await Promise.all([scram.createScramCredentials(options.adminPassword), scram.createScramCredentials(options.userPassword)]);
  const adminCols = columnsOf(adminCred);
  const userCols = columnsOf(userCred);
  const names = ['host', 'username', 'created_at', ...Object.keys(userCols)];

  const db = new Database(dbFile);
  try {
    db.pragma('busy_timeout = 10000');
    const insert = db.prepare(`insert into users (${names.join(', ')}) values (${names.map((n) => `@${n}`).join(', ')})`);
    const insertMany = db.transaction((rows: Array<Record<string, unknown>>) => {
      for (const row of rows) insert.run(row);
    });
    const now = Date.now();
    insertMany([{ host: HOST, username: ADMIN_USER, created_at: now, ...adminCols }]);
    const batch = options.batch ?? 10_000;
    for (let start = 0; start < options.count; start += batch) {
      const rows: Array<Record<string, unknown>> = [];
      for (let i = start; i < Math.min(options.count, start + batch); i++) rows.push({ host: HOST, username: seedUsername(i), created_at: now, ...userCols });
      insertMany(rows);
    }
  } finally {
    db.close();
  }
  return { inserted: options.count + 1, ms: performance.now() - started };
}

// ---------------------------------------------------------------------------------------------------------
// CPU accounting from /proc

let clockTicks: number | undefined;
export function clkTck(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** utime + stime in clock ticks from a /proc/.../stat file (fields 14 and 15; the name may hold spaces). */
function statTicks(file: string): number {
  const text = readFileSync(file, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  return Number(fields[11]) + Number(fields[12]);
}

/** Busy and total jiffies of the whole machine, from the `cpu` line of /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

export interface CpuSnapshot {
  at: number;
  processTicks: number;
  mainThreadTicks: number;
  machine: { busy: number; total: number };
  self: NodeJS.CpuUsage;
}

export function cpuSnapshot(pid: number): CpuSnapshot {
  return {
    at: performance.now(),
    processTicks: statTicks(`/proc/${pid}/stat`),
    // The main thread's tid is the pid: the event loop, apart from libuv's pool, GC helpers and the compiler.
    mainThreadTicks: statTicks(`/proc/${pid}/task/${pid}/stat`),
    machine: machineTicks(),
    self: process.cpuUsage(),
  };
}

export interface CpuUse {
  /** Percent of one core used by the whole server process (all threads) during the run. */
  serverProcessPct: number;
  /** Percent of one core used by the server's main thread: near 100 means the event loop is saturated. */
  serverMainThreadPct: number;
  /** Percent of one core used by this benchmark process (autocannon lives here). */
  benchProcessPct: number;
  /** Busy share of all cores of the machine, in percent of one core (200 = both of 2 cores busy). */
  machinePct: number;
}

export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot): CpuUse {
  const seconds = (b.at - a.at) / 1000;
  const tick = clkTck();
  const pct = (ticks: number) => round1((ticks / tick / seconds) * 100);
  const self = (b.self.user + b.self.system - a.self.user - a.self.system) / 1e6;
  const machineTotal = b.machine.total - a.machine.total;
  return {
    serverProcessPct: pct(b.processTicks - a.processTicks),
    serverMainThreadPct: pct(b.mainThreadTicks - a.mainThreadTicks),
    benchProcessPct: round1((self / seconds) * 100),
    machinePct: machineTotal > 0 ? round1(((b.machine.busy - a.machine.busy) / machineTotal) * 100 * cpus().length) : 0,
  };
}

/**
 * Waits until the machine is quiet (busy below `maxBusyPct` of one core over a second), for at most
 * `maxWaitS`: the machine may be shared (builds, test suites) and a benchmark next to them measures them
 * too. Returns the last background level seen, in percent of one core.
 */
export async function waitQuiet(maxBusyPct = 25, maxWaitS = 120, onWait?: (pct: number) => void): Promise<number> {
  const deadline = Date.now() + maxWaitS * 1000;
  let warned = false;
  for (;;) {
    const a = machineTicks();
    await sleep(1000);
    const b = machineTicks();
    const pct = round1(((b.busy - a.busy) / Math.max(1, b.total - a.total)) * 100 * cpus().length);
    if (pct < maxBusyPct || Date.now() > deadline) return pct;
    if (!warned) onWait?.(pct);
    warned = true;
  }
}

export function rssMb(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? round1(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

export function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

export function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** Exact percentile (nearest rank) of samples sorted in ascending order. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

// ---------------------------------------------------------------------------------------------------------
// wrk

export function whichWrk(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Tries `apt-get install -y wrk` once (root, Debian/Ubuntu). Returns wrk's path or a reason. */
export function installWrk(): { path?: string; failure?: string } {
  try {
    execFileSync('apt-get', ['install', '-y', 'wrk'], { stdio: 'pipe', timeout: 300_000 });
  } catch (err) {
    return { failure: `apt-get install -y wrk failed: ${String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim().split('\n').slice(-2).join(' ')}` };
  }
  const path = whichWrk();
  return path ? { path } : { failure: 'apt-get install -y wrk succeeded but wrk is not on PATH' };
}

/** A wrk script: POST with a JSON body and Basic auth; `done` prints exact figures as one JSON line. */
export function wrkScript(body: string, authorization: string): string {
  return `-- generated by bench/api
wrk.method = "POST"
wrk.body = ${JSON.stringify(body)}
wrk.headers["Content-Type"] = "application/json"
${authorization ? `wrk.headers["Authorization"] = ${JSON.stringify(authorization)}` : '-- no Authorization header: an anonymous call'}

-- wrk's own CPU time (utime + stime, clock ticks) from /proc/self/stat; its threads have ended by now.
local function cputicks()
  local f = io.open("/proc/self/stat", "r")
  if not f then return -1 end
  local s = f:read("*a")
  f:close()
  local fields = {}
  for w in s:match(".*%) (.*)"):gmatch("%S+") do fields[#fields + 1] = w end
  return tonumber(fields[12]) + tonumber(fields[13])
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,"latency_us":{"mean":%.1f,"p50":%d,"p90":%d,"p99":%d,"max":%d},' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"cpu_ticks":%d}\\n',
    summary.requests, summary.duration, summary.bytes, latency.mean,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout, cputicks()))
end
`;
}

export interface WrkResult {
  requests: number;
  duration_us: number;
  bytes: number;
  latency_us: { mean: number; p50: number; p90: number; p99: number; max: number };
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  /** wrk's own CPU time over its whole life (about the run), in clock ticks; -1 when unknown. */
  cpu_ticks: number;
  rawOutput: string;
}

export function runWrk(wrk: string, options: { url: string; script: string; threads: number; connections: number; durationS: number }): Promise<WrkResult> {
  return new Promise((resolveRun, reject) => {
    const args = [`-t${options.threads}`, `-c${options.connections}`, `-d${options.durationS}s`, '--latency', '-s', options.script, options.url];
    const child = spawn(wrk, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('WRKJSON '));
      if (code !== 0 || !line) return reject(new Error(`wrk ${args.join(' ')} exited with ${code}:\n${out}`));
      resolveRun({ ...(JSON.parse(line.slice('WRKJSON '.length)) as Omit<WrkResult, 'rawOutput'>), rawOutput: out });
    });
  });
}

// ---------------------------------------------------------------------------------------------------------
// The machine

export function machineInfo(): Record<string, unknown> {
  const cpuinfo = safeRead('/proc/cpuinfo');
  const model = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1]?.trim();
  const osRelease = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(safeRead('/etc/os-release'))?.[1];
  return {
    cpuModel: model ?? cpus()[0]?.model,
    cores: cpus().length,
    ramGiB: round1(totalmem() / 2 ** 30),
    node: process.version,
    os: osRelease ?? `${type()} ${release()}`,
    kernel: `${type()} ${release()}`,
  };
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

// ---------------------------------------------------------------------------------------------------------
// .cpuprofile summary

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number; scriptId: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileEntry {
  /** `function file:line` (file relative to the repository, or a package path, or node:internal/…). */
  name: string;
  functionName: string;
  location: string;
  /** The TypeScript source line for the repository's own compiled code, when a source map says. */
  source?: string;
  category: string;
  selfMs: number;
  selfPct: number;
  totalMs: number;
  totalPct: number;
  /** After mergeSummaries: the entry's self and total % in each run. */
  selfPctRuns?: number[];
  totalPctRuns?: number[];
}

export interface ProfileSummary {
  file: string;
  windowMs: number;
  sampledMs: number;
  samples: number;
  /** Samples inside the measured window only (when the clock check allowed filtering). */
  filtered: boolean;
  byFunction: ProfileEntry[];
  byFile: Array<{ file: string; category: string; selfMs: number; selfPct: number }>;
  byCategory: Array<{ category: string; selfMs: number; selfPct: number; totalMs: number; totalPct: number; selfPctRuns?: number[] }>;
}

const sourceMaps = new Map<string, SourceMap | null>();

function sourceMapOf(path: string): SourceMap | null {
  if (!sourceMaps.has(path)) {
    let map: SourceMap | null = null;
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
    } catch {
      // no map
    }
    sourceMaps.set(path, map);
  }
  return sourceMaps.get(path)!;
}

/** The repository's own files by path; packages by name; node's internals; V8's pseudo-frames. */
function categorise(url: string, functionName: string): { file: string; category: string } {
  if (!url) {
    if (functionName.startsWith('(')) return { file: functionName, category: functionName };
    return { file: '(native)', category: '(native V8/C++ builtins)' };
  }
  if (url.startsWith('node:')) return { file: url, category: 'node core' };
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = path.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const rest = path.slice(nm + '/node_modules/'.length).split('/');
    const pkg = rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
    const rel = path.slice(nm + 1);
    return { file: rel, category: `npm:${pkg}` };
  }
  const rel = relative(REPO, path);
  if (!rel.startsWith('..')) {
    const top = rel.split('/').slice(0, rel.startsWith('modules/') ? 2 : 1).join('/');
    return { file: rel, category: `repo:${top}` };
  }
  return { file: path, category: 'other' };
}

/**
 * Sums self time (the sample's leaf) and total time (anywhere on the stack, counted once per sample) per
 * function, per file and per category. Sample durations are the profile's own time deltas. With
 * `window` (µs on the profile's clock), only samples inside it count.
 */
export async function summariseProfile(file: string, window?: { fromUs: number; toUs: number }): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const entryByKey = new Map<string, Omit<ProfileEntry, 'selfMs' | 'selfPct' | 'totalMs' | 'totalPct'>>();
  const keyOf = new Map<number, { key: string; entry: Omit<ProfileEntry, 'selfMs' | 'selfPct' | 'totalMs' | 'totalPct'>; file: string }>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    const fn = functionName || '(anonymous)';
    const { file: f, category } = categorise(url, functionName);
    const location = url ? `${f}:${lineNumber + 1}` : f;
    let source: string | undefined;
    if (url.startsWith('file://') && category.startsWith('repo:')) {
      const map = sourceMapOf(fileURLToPath(url));
      const hit = map?.findEntry(lineNumber, columnNumber) as { originalSource?: string; originalLine?: number } | undefined;
      if (hit?.originalSource && hit.originalLine !== undefined) {
        const src = hit.originalSource.startsWith('file://') ? fileURLToPath(hit.originalSource) : resolve(dirname(fileURLToPath(url)), hit.originalSource);
        source = `${relative(REPO, src)}:${hit.originalLine + 1}`;
      }
    }
    const key = `${fn} ${location}`;
    const entry = { name: key, functionName: fn, location, source, category };
    keyOf.set(node.id, { key, file: f, entry });
    if (!entryByKey.has(key)) entryByKey.set(key, entry);
  }
  // The distinct function keys and categories on each node's stack, memoised.
  const stackKeys = new Map<number, { keys: Set<string>; categories: Set<string> }>();
  const stackOf = (id: number): { keys: Set<string>; categories: Set<string> } => {
    const known = stackKeys.get(id);
    if (known) return known;
    const p = parent.get(id);
    const up = p === undefined ? { keys: new Set<string>(), categories: new Set<string>() } : stackOf(p);
    const own = keyOf.get(id)!;
    const result = { keys: new Set(up.keys).add(own.key), categories: new Set(up.categories).add(own.entry.category) };
    stackKeys.set(id, result);
    return result;
  };

  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const fileSelf = new Map<string, { category: string; us: number }>();
  const catSelf = new Map<string, number>();
  const catTotal = new Map<string, number>();
  const entries = new Map<string, Omit<ProfileEntry, 'selfMs' | 'selfPct' | 'totalMs' | 'totalPct'>>();
  let t = profile.startTime;
  let sampledUs = 0;
  let counted = 0;
  // timeDeltas[i] is the gap before sample i; the sample's own duration is the next gap.
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    const dur = i + 1 < profile.timeDeltas.length ? profile.timeDeltas[i + 1]! : 0;
    if (window && (t < window.fromUs || t > window.toUs)) continue;
    const id = profile.samples[i]!;
    const own = keyOf.get(id)!;
    if (own.entry.functionName === '(root)') continue;
    counted++;
    sampledUs += dur;
    entries.set(own.key, own.entry);
    self.set(own.key, (self.get(own.key) ?? 0) + dur);
    const fs = fileSelf.get(own.file) ?? { category: own.entry.category, us: 0 };
    fs.us += dur;
    fileSelf.set(own.file, fs);
    catSelf.set(own.entry.category, (catSelf.get(own.entry.category) ?? 0) + dur);
    const stack = stackOf(id);
    for (const k of stack.keys) {
      total.set(k, (total.get(k) ?? 0) + dur);
      if (!entries.has(k)) entries.set(k, entryByKey.get(k)!);
    }
    for (const c of stack.categories) catTotal.set(c, (catTotal.get(c) ?? 0) + dur);
  }
  const pct = (us: number) => round1((us / sampledUs) * 100);
  const ms = (us: number) => round1(us / 1000);
  const byFunction: ProfileEntry[] = [...entries.entries()]
    .map(([k, e]) => ({ ...e, selfMs: ms(self.get(k) ?? 0), selfPct: pct(self.get(k) ?? 0), totalMs: ms(total.get(k) ?? 0), totalPct: pct(total.get(k) ?? 0) }))
    .sort((a, b) => b.selfMs - a.selfMs || b.totalMs - a.totalMs);
  const byFile = [...fileSelf.entries()].map(([f, v]) => ({ file: f, category: v.category, selfMs: ms(v.us), selfPct: pct(v.us) })).sort((a, b) => b.selfMs - a.selfMs);
  const byCategory = [...new Set([...catSelf.keys(), ...catTotal.keys()])]
    .map((c) => ({ category: c, selfMs: ms(catSelf.get(c) ?? 0), selfPct: pct(catSelf.get(c) ?? 0), totalMs: ms(catTotal.get(c) ?? 0), totalPct: pct(catTotal.get(c) ?? 0) }))
    .sort((a, b) => b.selfMs - a.selfMs);
  return {
    file,
    windowMs: window ? ms(window.toUs - window.fromUs) : ms(profile.endTime - profile.startTime),
    sampledMs: ms(sampledUs),
    samples: counted,
    filtered: window !== undefined,
    byFunction,
    byFile,
    byCategory,
  };
}

/**
 * Pools the samples of several profiles of the same load: sums per function, file and area, percentages
 * of the pooled sampled time, and each entry's self % in every run (JIT decisions such as inlining move
 * time between a callee and its caller from one process to the next, so one profile alone can mislead).
 */
export function mergeSummaries(summaries: ProfileSummary[]): ProfileSummary {
  const sampledMs = summaries.reduce((s, x) => s + x.sampledMs, 0);
  const pct = (ms: number) => round1((ms / sampledMs) * 100);
  const runPct = <T>(pick: (s: ProfileSummary) => T[], key: (t: T) => string, value: (t: T) => number, k: string) =>
    summaries.map((s) => value(pick(s).find((t) => key(t) === k) ?? ({} as T)) ?? 0);
  const fns = new Map<string, ProfileEntry>();
  for (const s of summaries) {
    for (const e of s.byFunction) {
      const m = fns.get(e.name);
      if (m) {
        m.selfMs += e.selfMs;
        m.totalMs += e.totalMs;
      } else fns.set(e.name, { ...e });
    }
  }
  const byFunction = [...fns.values()]
    .map((e) => ({
      ...e,
      selfMs: round1(e.selfMs),
      totalMs: round1(e.totalMs),
      selfPct: pct(e.selfMs),
      totalPct: pct(e.totalMs),
      selfPctRuns: runPct((s) => s.byFunction, (t) => t.name, (t) => t.selfPct, e.name),
      totalPctRuns: runPct((s) => s.byFunction, (t) => t.name, (t) => t.totalPct, e.name),
    }))
    .sort((a, b) => b.selfMs - a.selfMs || b.totalMs - a.totalMs);
  const files = new Map<string, { file: string; category: string; selfMs: number; selfPct: number }>();
  for (const s of summaries) {
    for (const f of s.byFile) {
      const m = files.get(f.file);
      if (m) m.selfMs += f.selfMs;
      else files.set(f.file, { ...f });
    }
  }
  const byFile = [...files.values()].map((f) => ({ ...f, selfMs: round1(f.selfMs), selfPct: pct(f.selfMs) })).sort((a, b) => b.selfMs - a.selfMs);
  const cats = new Map<string, { category: string; selfMs: number; totalMs: number }>();
  for (const s of summaries) {
    for (const c of s.byCategory) {
      const m = cats.get(c.category) ?? { category: c.category, selfMs: 0, totalMs: 0 };
      m.selfMs += c.selfMs;
      m.totalMs += c.totalMs;
      cats.set(c.category, m);
    }
  }
  const byCategory = [...cats.values()]
    .map((c) => ({
      category: c.category,
      selfMs: round1(c.selfMs),
      selfPct: pct(c.selfMs),
      totalMs: round1(c.totalMs),
      totalPct: pct(c.totalMs),
      selfPctRuns: runPct((s) => s.byCategory, (t) => t.category, (t) => t.selfPct, c.category),
    }))
    .sort((a, b) => b.selfMs - a.selfMs);
  return {
    file: summaries.map((s) => s.file).join(', '),
    windowMs: round1(summaries.reduce((s, x) => s + x.windowMs, 0)),
    sampledMs: round1(sampledMs),
    samples: summaries.reduce((s, x) => s + x.samples, 0),
    filtered: summaries.every((s) => s.filtered),
    byFunction,
    byFile,
    byCategory,
  };
}
