/**
 * Benchmark of `connected_users_info` (mod_admin_extra) with many sessions: the real server as a child
 * process, N idle authenticated sessions held by bench/c2s's load-generator processes, then calls of
 * POST /api/connected_users_info (and, for comparison, the kernel's connected_users, which lists only the
 * JIDs), one at a time and then several at once. Prints a markdown table; writes everything to
 * bench/results/admin-connected-users-info-<time>.json.
 *
 *   node --import tsx bench/admin/connected-users-info.ts [--quick] [--sessions 10000] [--calls 30] [--duration 5]
 *        [--concurrency 4] [--warmup 3] [--workers 4] [--tls] [--loglevel warning] [--keep]
 *
 * Each call's latency is measured from the request to the last byte of the answer; the answer is parsed
 * and checked (one entry per session, every Session field) outside the timed part.
 */
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
  callApi,
  cpuBetween,
  cpuSnapshot,
  freePort,
  machineInfo,
  percentile,
  requireBuild,
  round1,
  round2,
  seedAccounts,
  seedUsername,
  sleep,
  startServer,
  waitQuiet,
  writeConfig,
  type CpuUse,
  type LogLevel,
} from '../api/lib.js';
import { TLS_CA, c2sConfig, fdLimit, forkWorkers, stopWorkers, type Worker } from '../c2s/lib.js';
import type { ConnectResult } from '../c2s/worker.js';

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    sessions: { type: 'string' },
    calls: { type: 'string' },
    duration: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    warmup: { type: 'string' },
    workers: { type: 'string' },
    tls: { type: 'boolean', default: false },
    loglevel: { type: 'string', default: 'warning' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (opts.help) {
  console.log('usage: node --import tsx bench/admin/connected-users-info.ts [--quick] [--sessions N] [--calls N] [--duration S] [--concurrency C] [--warmup N] [--workers W] [--tls] [--loglevel warning] [--keep]');
  process.exit(0);
}

const quick = opts.quick;
const SESSIONS = Number(opts.sessions ?? (quick ? 1000 : 10_000));
const CALLS = Number(opts.calls ?? (quick ? 10 : 30));
/** Each row runs at least CALLS calls and at least this long, so that the CPU figures span many clock ticks. */
const DURATION_S = Number(opts.duration ?? (quick ? 1 : 5));
const CONCURRENCY = Number(opts.concurrency);
const WARMUP = Number(opts.warmup ?? (quick ? 2 : 5));
const WORKERS = Number(opts.workers ?? (quick ? 2 : 4));
const LOGLEVEL = opts.loglevel as LogLevel;
const USER_PASSWORD = 'bench-user-pass';
const ADMIN_PASSWORD = 'bench-admin-pass';
/** Logins in progress at once while filling, over all generator processes. */
const FILL_CONCURRENCY = quick ? 40 : 200;
const SESSION_FIELDS = ['jid', 'connection', 'ip', 'port', 'priority', 'node', 'uptime', 'status', 'resource', 'statustext'];

if (!(SESSIONS >= 1) || !(CALLS >= 1) || !(DURATION_S >= 0) || !(CONCURRENCY >= 1) || !(WARMUP >= 0) || !(WORKERS >= 1 && WORKERS <= 200)) {
  console.error('bad arguments: see --help');
  process.exit(64);
}

const log = (message: string) => process.stderr.write(`[bench connected_users_info] ${message}\n`);

interface Row {
  command: string;
  concurrency: number;
  calls: number;
  /** Entries in each answer (checked equal for every call). */
  entries: number;
  answerKiB: number;
  callsPerSec: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  cpu: CpuUse;
  backgroundPct: number;
}

function spread<T>(items: T[], parts: number): T[][] {
  const size = Math.ceil(items.length / parts);
  return Array.from({ length: parts }, (_, i) => items.slice(i * size, (i + 1) * size));
}

function summary(values: number[]): Row['latencyMs'] {
  const sorted = Float64Array.from(values).sort();
  return { p50: round2(percentile(sorted, 50)), p90: round2(percentile(sorted, 90)), p99: round2(percentile(sorted, 99)), max: round2(sorted[sorted.length - 1] ?? NaN) };
}

async function waitSessions(port: number, count: number, ms = 60_000): Promise<number | undefined> {
  const deadline = Date.now() + ms;
  let seen: number | undefined;
  while (Date.now() < deadline) {
    const res = await callApi(port, 'connected_users_number', {});
    seen = typeof res.body === 'number' ? res.body : undefined;
    if (seen === count) return seen;
    await sleep(250);
  }
  return seen;
}

/** One timed call: latency to the last byte, then the answer parsed and checked outside the timing. */
async function timedCall(port: number, command: string, authorization: string): Promise<{ ms: number; bytes: number; entries: number }> {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/api/${command}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body: '{}' });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`${command}: HTTP ${res.status} ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as unknown[];
  if (command === 'connected_users_info') {
    const first = body[0] as Record<string, unknown> | undefined;
    if (first && Object.keys(first).join() !== SESSION_FIELDS.join()) throw new Error(`connected_users_info: unexpected fields ${Object.keys(first).join()}`);
  }
  return { ms, bytes: Buffer.byteLength(text), entries: body.length };
}

async function measure(port: number, serverPid: number, command: string, concurrency: number, authorization: string): Promise<Row> {
  const backgroundPct = await waitQuiet(25, quick ? 3 : 120, (pct) => log(`  the machine is busy (${pct}% of a core): waiting for it to calm down`));
  for (let i = 0; i < WARMUP; i++) await timedCall(port, command, authorization);
  const latencies: number[] = [];
  let bytes = 0;
  let entries = -1;
  let next = 0;
  const before = cpuSnapshot(serverPid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < CALLS || performance.now() - started < DURATION_S * 1000) {
        next++;
        const call = await timedCall(port, command, authorization);
        latencies.push(call.ms);
        bytes = call.bytes;
        if (entries !== -1 && call.entries !== entries) throw new Error(`${command}: ${call.entries} entries, then ${entries}`);
        entries = call.entries;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuBetween(before, cpuSnapshot(serverPid));
  const row: Row = { command, concurrency, calls: latencies.length, entries, answerKiB: round1(bytes / 1024), callsPerSec: round1(latencies.length / seconds), latencyMs: summary(latencies), cpu, backgroundPct };
  log(`${command} c=${concurrency}: ${row.callsPerSec} calls/s, p50 ${row.latencyMs.p50} ms, p99 ${row.latencyMs.p99} ms, ${entries} entries, ${row.answerKiB} KiB, server CPU ${cpu.serverProcessPct}% (main ${cpu.serverMainThreadPct}%)`);
  return row;
}

function table(rows: Row[]): string {
  const head = ['command', 'sessions listed', 'answer KiB', 'concurrency', 'calls', 'calls/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'server CPU %', 'server main thread %', 'other CPU %'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i ? '---:' : '---')).join('|')}|`];
  for (const r of rows) {
    const other = round1(Math.max(0, r.cpu.machinePct - r.cpu.serverProcessPct - r.cpu.benchProcessPct));
    lines.push(
      `| ${r.command} | ${r.entries.toLocaleString('en-US')} | ${r.answerKiB.toLocaleString('en-US')} | ${r.concurrency} | ${r.calls} | ${r.callsPerSec} | ${r.latencyMs.p50} | ${r.latencyMs.p90} | ${r.latencyMs.p99} | ${r.latencyMs.max} | ${r.cpu.serverProcessPct} | ${r.cpu.serverMainThreadPct} | ${other} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  requireBuild();
  const dir = await mkdtemp(join(tmpdir(), 'bench-admin-'));
  const dataDir = join(dir, 'data');
  const [httpPort, c2sPort] = [await freePort(), await freePort()];
  const configFile = join(dir, 'service.yml');
  const config = c2sConfig({ httpPort, c2sPort, dataDir, loglevel: LOGLEVEL, mode: opts.tls ? 'tls' : 'plain' });
  config.modules = { ...(config.modules as Record<string, unknown>), mod_admin_extra: {} };
  await writeConfig(configFile, config);
  const started = new Date();
  log(`starting the server (c2s on 127.0.0.1:${c2sPort}, ${opts.tls ? 'STARTTLS' : 'no TLS'}); ${WORKERS} generator processes`);
  const server = await startServer({ configFile, port: httpPort, logFile: join(dir, 'server.log') });
  const workers: Worker[] = forkWorkers(WORKERS);
  const rows: Row[] = [];
  let held = 0;
  let exitCode: number | null = null;
  try {
    const seeded = await seedAccounts(join(dataDir, 'service.db'), { count: SESSIONS, adminPassword: ADMIN_PASSWORD, userPassword: USER_PASSWORD });
    log(`seeded ${seeded.inserted} accounts in ${Math.round(seeded.ms)} ms`);
    const serverFds = fdLimit(server.pid).soft;
    if (SESSIONS + 100 > serverFds) log(`warning: ${SESSIONS} sessions need about as many file descriptors; the server may open ${serverFds}`);
    await Promise.all(workers.map((w) => w.call({ type: 'init', port: c2sPort, domain: HOST, password: USER_PASSWORD, localAddress: w.localAddress, tls: opts.tls, caFile: TLS_CA })));
    const fillStarted = performance.now();
    const users = Array.from({ length: SESSIONS }, (_, i) => seedUsername(i));
    const perWorker = Math.max(1, Math.round(FILL_CONCURRENCY / workers.length));
    const results = await Promise.all(spread(users, workers.length).map((slice, i) => workers[i]!.call<ConnectResult>({ type: 'connect', users: slice, resource: 'bench', concurrency: perWorker })));
    held = results.reduce((n, r) => n + r.ok, 0);
    const failed = results.reduce((n, r) => n + r.failed, 0);
    if (failed) log(`${failed} logins failed, e.g. ${results.flatMap((r) => r.errors).slice(0, 2).join(' | ')}`);
    const reported = await waitSessions(httpPort, held);
    log(`${held} sessions logged in in ${round1((performance.now() - fillStarted) / 1000)} s (the server reports ${reported})`);
    if (reported !== held) throw new Error(`the server reports ${reported} sessions, ${held} were logged in`);

    const authorization = basicAuth(ADMIN_JID, ADMIN_PASSWORD);
    for (const command of ['connected_users_info', 'connected_users']) {
      for (const concurrency of [...new Set([1, CONCURRENCY])]) rows.push(await measure(httpPort, server.pid, command, concurrency, authorization));
    }
    await Promise.all(workers.map((w) => w.call({ type: 'close' })));
  } finally {
    await stopWorkers(workers);
    exitCode = await server.stop();
    if (!opts.keep) await rm(dir, { recursive: true, force: true });
    else log(`kept ${dir}`);
  }

  const machine = machineInfo();
  console.log(`\n## connected_users_info benchmark (${started.toISOString()}${quick ? ', quick' : ''})\n`);
  console.log(`${machine.cpuModel}, ${machine.cores} cores, ${machine.ramGiB} GiB, Node ${machine.node}, ${machine.os}`);
  console.log(`Server: loglevel ${LOGLEVEL}, modules mod_http_api and mod_admin_extra, ${held.toLocaleString('en-US')} idle sessions (${opts.tls ? 'STARTTLS' : 'no TLS'}) from ${WORKERS} generator processes. ${WARMUP} warm-up calls, then at least ${CALLS} measured calls and ${DURATION_S} s per row; HTTP Basic as admin.\n`);
  console.log(table(rows));
  if (exitCode !== 0) console.log(`\nNote: the server exited with code ${exitCode} on SIGINT`);
  const noisy = rows.filter((r) => r.cpu.machinePct - r.cpu.serverProcessPct - r.cpu.benchProcessPct > 15);
  if (noisy.length) console.log(`\nNote: ${noisy.length} row(s) shared the machine with other work (other CPU > 15% of a core): not a figure to quote.`);
  await mkdir(RESULTS_DIR, { recursive: true });
  const out = join(RESULTS_DIR, `admin-connected-users-info-${started.toISOString().replace(/[:.]/g, '-')}${quick ? '-quick' : ''}.json`);
  await writeFile(
    out,
    `${JSON.stringify({ startedAt: started.toISOString(), machine, settings: { quick, sessions: SESSIONS, held, calls: CALLS, durationS: DURATION_S, concurrency: CONCURRENCY, warmup: WARMUP, workers: WORKERS, tls: opts.tls, loglevel: LOGLEVEL }, serverExitCode: exitCode, rows }, null, 2)}\n`,
  );
  console.log(`\nRaw results: ${relative(REPO, out)}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
