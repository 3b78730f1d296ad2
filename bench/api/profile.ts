/**
 * CPU profile of the server under one load: by default POST /api/status at concurrency 16.
 *
 *   node --import tsx bench/api/profile.ts [--duration 10] [--warmup 3] [--connections 16]
 *        [--command status] [--loglevel warning] [--interval 250] [--users 100000] [--tool wrk|autocannon]
 *        [--repeat 3] [--top 15] [--keep]
 *
 * Starts the real server as `node --cpu-prof --cpu-prof-dir=DIR --cpu-prof-interval=µs
 * cli/dist/servicectl.js --config FILE foreground`, seeds the accounts as run.ts does, warms up, loads it,
 * stops it with SIGINT (which writes the .cpuprofile), and sums self and total time per function, file and
 * package over the samples taken during the measured run only. Repeats that with a fresh process
 * `--repeat` times and pools the samples: where V8 inlines differs from one process to the next, and a
 * single profile can credit a callee's time to its caller. The profiles and the summary are copied to
 * bench/results/ (open a .cpuprofile in Chrome DevTools or speedscope for the flame graph).
 */
import autocannon from 'autocannon';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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
  hrtimeUs,
  machineInfo,
  mergeSummaries,
  requireBuild,
  round1,
  runWrk,
  seedAccounts,
  startServer,
  summariseProfile,
  waitQuiet,
  whichWrk,
  wrkScript,
  writeConfig,
  type LogLevel,
  type ProfileSummary,
} from './lib.js';

const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    command: { type: 'string', default: 'status' },
    loglevel: { type: 'string', default: 'warning' },
    interval: { type: 'string', default: '250' },
    users: { type: 'string', default: '100000' },
    tool: { type: 'string' },
    top: { type: 'string', default: '15' },
    repeat: { type: 'string', default: '3' },
    keep: { type: 'boolean', default: false },
    auth: { type: 'string', default: 'basic' },
  },
});

const DURATION = Number(opts.duration);
const WARMUP = Number(opts.warmup);
const CONNECTIONS = Number(opts.connections);
const USERS = Number(opts.users);
const TOP = Number(opts.top);
const REPEAT = Math.max(1, Number(opts.repeat));
const LEVEL = opts.loglevel as LogLevel;
const ADMIN_PASSWORD = 'bench-admin-pass';
/** basic: admin's password; bearer: a service:admin token issued after each start; none: anonymous. */
const AUTH_KIND = opts.auth as 'basic' | 'bearer' | 'none';
if (!['basic', 'bearer', 'none'].includes(AUTH_KIND)) {
  console.error('bad arguments: --auth takes basic, bearer or none');
  process.exit(64);
}
const BASIC = basicAuth(ADMIN_JID, ADMIN_PASSWORD);
let AUTH = AUTH_KIND === 'basic' ? BASIC : '';
const BODY = opts.command === 'registered_users' ? JSON.stringify({ host: HOST }) : '{}';

const log = (message: string) => process.stderr.write(`[profile] ${message}\n`);

function markdown(summary: ProfileSummary, top: number): string {
  const out: string[] = [];
  out.push(`Self time by function (top ${top}); "total" counts the function anywhere on the stack.\n`);
  const runs = (values?: number[]) => (values && values.length > 1 ? values.join(' / ') : '');
  out.push('| # | self ms | self % | self % per run | total % | function | location | TypeScript source |');
  out.push('|---:|---:|---:|---:|---:|---|---|---|');
  summary.byFunction.slice(0, top).forEach((e, i) => {
    out.push(`| ${i + 1} | ${e.selfMs} | ${e.selfPct} | ${runs(e.selfPctRuns)} | ${e.totalPct} | \`${e.functionName}\` | ${e.location} | ${e.source ?? ''} |`);
  });
  out.push('\nSelf time by package / area (total = the area appears anywhere on the stack).\n');
  out.push('| area | self ms | self % | self % per run | total % |');
  out.push('|---|---:|---:|---:|---:|');
  for (const c of summary.byCategory.slice(0, 20)) out.push(`| ${c.category} | ${c.selfMs} | ${c.selfPct} | ${runs(c.selfPctRuns)} | ${c.totalPct} |`);
  out.push(`\nSelf time by file (top ${top}).\n`);
  out.push('| file | self ms | self % |');
  out.push('|---|---:|---:|');
  for (const f of summary.byFile.slice(0, top)) out.push(`| ${f.file} | ${f.selfMs} | ${f.selfPct} |`);
  out.push('\nSelected functions by total (inclusive) time.\n');
  out.push('| total % | total % per run | self % | function | location |');
  out.push('|---:|---:|---:|---|---|');
  const inclusive = [...summary.byFunction].filter((e) => !e.functionName.startsWith('(')).sort((a, b) => b.totalMs - a.totalMs);
  for (const e of inclusive.slice(0, 30)) out.push(`| ${e.totalPct} | ${runs(e.totalPctRuns)} | ${e.selfPct} | \`${e.functionName}\` | ${e.location}${e.source ? ` (${e.source})` : ''} |`);
  return out.join('\n');
}

interface RunResult {
  measured: Record<string, unknown>;
  summary: ProfileSummary;
  profileFile: string;
}

async function main(): Promise<void> {
  requireBuild();
  const dir = await mkdtemp(join(tmpdir(), 'bench-profile-'));
  const dataDir = join(dir, 'data');
  const configFile = join(dir, 'service.yml');
  const port = await freePort();
  const wrk = opts.tool === 'autocannon' ? undefined : whichWrk();
  if (opts.tool === 'wrk' && !wrk) throw new Error('wrk is not installed');
  const tool = wrk ? 'wrk' : 'autocannon';
  const url = `http://127.0.0.1:${port}/api/${opts.command}`;
  const started = new Date();
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  await writeConfig(configFile, benchConfig({ port, dataDir, loglevel: LEVEL }));
  const script = join(dir, 'load.lua');
  await writeFile(script, wrkScript(BODY, AUTH));
  const threads = Math.min(2, CONNECTIONS);
  const load = async (durationS: number) => {
    if (wrk) {
      const r = await runWrk(wrk, { url, script, threads, connections: CONNECTIONS, durationS });
      return { requests: r.requests, reqPerSec: round1(r.requests / (r.duration_us / 1e6)), p50Ms: r.latency_us.p50 / 1000, p99Ms: r.latency_us.p99 / 1000, non2xx: r.errors.status };
    }
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(AUTH ? { authorization: AUTH } : {}) };
    const r = await autocannon({ url, method: 'POST', headers, body: BODY, connections: CONNECTIONS, duration: durationS, timeout: 60 });
    return { requests: r.requests.total, reqPerSec: round1(r.requests.mean), p50Ms: r.latency.p50, p99Ms: r.latency.p99, non2xx: r.non2xx };
  };
  await mkdir(RESULTS_DIR, { recursive: true });

  /** One server process under the profiler: start, (seed), warm up, measure, SIGINT, summarise. */
  const profileOnce = async (run: number): Promise<RunResult> => {
    const profDir = join(dir, `prof-${run}`);
    await mkdir(profDir);
    const nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${profDir}`, `--cpu-prof-interval=${Number(opts.interval)}`];
    log(`run ${run}/${REPEAT}: node ${nodeArgs.join(' ')} cli/dist/servicectl.js (loglevel ${LEVEL}) on port ${port}`);
    const server = await startServer({ configFile, port, logFile: join(dir, `server-${run}.log`), nodeArgs });
    let window: { fromUs: number; toUs: number };
    let measured: Record<string, unknown>;
    try {
      if (run === 1) {
        const seeded = await seedAccounts(join(dataDir, 'service.db'), { count: USERS, adminPassword: ADMIN_PASSWORD, userPassword: 'bench-user-pass' });
        log(`seeded ${seeded.inserted} accounts in ${Math.round(seeded.ms)} ms`);
      }
      if (AUTH_KIND === 'bearer') {
        const issued = await callApi(port, 'oauth_issue_token', { jid: ADMIN_JID, ttl: 3600, scopes: ['service:admin'] }, BASIC);
        if (issued.status !== 200) throw new Error(`oauth_issue_token answered ${issued.status}: ${JSON.stringify(issued.body)}`);
        AUTH = `Bearer ${issued.body.token}`;
        await writeFile(script, wrkScript(BODY, AUTH));
      }
      const check = await callApi(port, opts.command!, JSON.parse(BODY) as Record<string, unknown>, AUTH || undefined);
      if (check.status !== 200) throw new Error(`${opts.command} answered ${check.status}: ${JSON.stringify(check.body).slice(0, 300)}`);
      await waitQuiet(25, 120, (pct) => log(`  the machine is busy (${pct}% of a core): waiting for it to calm down`));
      if (WARMUP > 0) await load(WARMUP);
      log(`  ${tool} ${opts.command} c=${CONNECTIONS} for ${DURATION}s under the profiler`);
      const before = cpuSnapshot(server.pid);
      const fromUs = hrtimeUs();
      const result = await load(DURATION);
      const toUs = hrtimeUs();
      const cpu = cpuBetween(before, cpuSnapshot(server.pid));
      window = { fromUs, toUs };
      measured = { tool, ...result, cpu };
      log(`  ${result.reqPerSec} req/s under the profiler, server CPU ${cpu.serverProcessPct}% (main thread ${cpu.serverMainThreadPct}%)`);
    } finally {
      const code = await server.stop();
      if (code !== 0) log(`the server exited with code ${code}`);
    }
    // Node names a profile CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the main thread (the
    // others are worker threads, such as the log transport's).
    const files = (await readdir(profDir)).filter((f) => /\.0\.\d+\.cpuprofile$/.test(f));
    if (files.length !== 1) throw new Error(`expected one main-thread .cpuprofile in ${profDir}, found ${files.length}`);
    const profileFile = join(profDir, files[0]!);
    // V8 stamps samples with the same monotonic clock as process.hrtime on Linux: check before trusting it.
    const { startTime, endTime } = JSON.parse(await readFile(profileFile, 'utf8')) as { startTime: number; endTime: number };
    const sameClock = startTime >= server.spawnedAtUs - 1_000_000 && startTime <= window.fromUs && endTime >= window.toUs;
    if (!sameClock) log('the profile clock does not match process.hrtime: summarising the whole profile (start-up and warm-up included)');
    const summary = await summariseProfile(profileFile, sameClock ? window : undefined);
    const kept = join(RESULTS_DIR, `profile-${opts.command}-c${CONNECTIONS}-${LEVEL}-${stamp}-run${run}.cpuprofile`);
    await copyFile(profileFile, kept);
    return { measured, summary: { ...summary, file: relative(REPO, kept) }, profileFile: kept };
  };

  const runs: RunResult[] = [];
  try {
    for (let run = 1; run <= REPEAT; run++) runs.push(await profileOnce(run));
  } finally {
    if (!opts.keep) await rm(dir, { recursive: true, force: true });
    else log(`kept ${dir}`);
  }
  const merged = runs.length === 1 ? runs[0]!.summary : mergeSummaries(runs.map((r) => r.summary));
  const stem = join(RESULTS_DIR, `profile-${opts.command}-c${CONNECTIONS}-${LEVEL}-${stamp}`);
  await writeFile(
    `${stem}.json`,
    `${JSON.stringify({ startedAt: started.toISOString(), machine: machineInfo(), settings: { durationS: DURATION, warmupS: WARMUP, connections: CONNECTIONS, command: opts.command, loglevel: LEVEL, intervalUs: Number(opts.interval), tool, repeat: REPEAT }, runs: runs.map((r) => ({ measured: r.measured, profile: r.summary.file, byCategory: r.summary.byCategory, byFunction: r.summary.byFunction.slice(0, 100) })), merged: { ...merged, byFunction: merged.byFunction.slice(0, 200) } }, null, 2)}\n`,
  );

  console.log(`\n## CPU profile: POST /api/${opts.command}, ${CONNECTIONS} connections, ${tool}, loglevel ${LEVEL}, ${runs.length} run(s)\n`);
  for (const [i, r] of runs.entries()) console.log(`run ${i + 1}: ${JSON.stringify(r.measured)}`);
  console.log(`\n${merged.samples} samples, ${merged.sampledMs} ms sampled in ${merged.windowMs} ms of measured runs${merged.filtered ? '' : ' (whole process lives: start-up and warm-up included)'}\n`);
  console.log(markdown(merged, TOP));
  console.log(`\nProfiles: ${runs.map((r) => r.summary.file).join(', ')}\nSummary: ${relative(REPO, `${stem}.json`)}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
