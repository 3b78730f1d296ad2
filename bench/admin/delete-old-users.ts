/**
 * Benchmark of delete_old_users_vhost (mod_admin_extra) over a big vhost, run the way an operator runs it:
 * `servicectl delete_old_users_vhost localhost 30` on a terminal, against the real server started as a
 * child process.
 *
 *   node --import tsx bench/admin/delete-old-users.ts [--users 100000] [--days 30] [--keep]
 *
 * Seeds `--users` accounts straight into SQLite (as bench/api does) and, for them, last-activity rows the
 * same way: a third logged out 40–70 days ago (to delete), a third 1–20 days ago (to keep), a third never
 * logged in (to delete), plus admin@localhost, which the access rule protect_old_users protects. The
 * server runs the modules a typical deployment has, so each removal clears what each keeps (the
 * remove_user hook). servicectl runs under a pseudo-terminal (util-linux `script`), so it draws its
 * progress bar; the bar is relayed to this process's stderr when that is a terminal, and its redraws
 * are counted. Afterwards the remaining accounts are checked. Prints a markdown table and writes the
 * figures to bench/results/delete-old-users-<time>.json. Quote figures only from a quiet machine.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import {
  ADMIN_JID,
  HOST,
  REPO,
  RESULTS_DIR,
  SERVICECTL,
  basicAuth,
  benchConfig,
  callApi,
  cpuBetween,
  cpuSnapshot,
  freePort,
  machineInfo,
  requireBuild,
  round1,
  rssMb,
  seedAccounts,
  seedUsername,
  startServer,
  waitQuiet,
  writeConfig,
  type CpuUse,
} from '../api/lib.js';

const { values: opts } = parseArgs({
  options: {
    users: { type: 'string', default: '100000' },
    days: { type: 'string', default: '30' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (opts.help) {
  console.log('usage: node --import tsx bench/admin/delete-old-users.ts [--users N] [--days D] [--keep]');
  process.exit(0);
}

const USERS = Number(opts.users);
const DAYS = Number(opts.days);
if (!Number.isInteger(USERS) || USERS < 3 || !Number.isInteger(DAYS) || DAYS < 21 || DAYS > 39) {
  console.error('bad arguments: --users is an integer of at least 3; --days between 21 and 39 (the seeded activity is 1–20 and 40–70 days old)');
  process.exit(64);
}

const DAY_MS = 86_400_000;
const ADMIN_PASSWORD = 'bench-admin-pass';
const AUTH = basicAuth(ADMIN_JID, ADMIN_PASSWORD);
/** The modules of a typical deployment: each joins remove_user, so a removal costs what it would in production. */
const MODULES = ['mod_http_api', 'mod_admin_extra', 'mod_last', 'mod_roster', 'mod_presence', 'mod_private', 'mod_vcard', 'mod_offline', 'mod_privacy', 'mod_blocking'];

type Fate = 'old' | 'recent' | 'never';
const fateOf = (i: number): Fate => (['old', 'recent', 'never'] as const)[i % 3]!;

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

/** Last-activity rows for the seeded accounts, straight into mod_last's table (one transaction per 10 000 rows). */
async function seedLastActivity(dbFile: string, now: number): Promise<{ rows: number; ms: number }> {
  const started = performance.now();
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(dbFile);
  let rows = 0;
  try {
    db.pragma('busy_timeout = 10000');
    const insert = db.prepare('insert into last_activity (host, username, logout_at, status) values (?, ?, ?, ?)');
    const insertMany = db.transaction((batch: Array<[string, string, number, string]>) => {
      for (const row of batch) insert.run(...row);
    });
    for (let start = 0; start < USERS; start += 10_000) {
      const batch: Array<[string, string, number, string]> = [];
      for (let i = start; i < Math.min(USERS, start + 10_000); i++) {
        const fate = fateOf(i);
        if (fate === 'never') continue;
        // Spread over days, so the index on (host, logout_at) has real work to do.
        const daysAgo = fate === 'old' ? 40 + (i % 31) : 1 + (i % 20);
        batch.push([HOST, seedUsername(i), now - daysAgo * DAY_MS - (i % 86_400) * 1000, fate === 'old' ? 'gone' : '']);
      }
      insertMany(batch);
      rows += batch.length;
    }
  } finally {
    db.close();
  }
  return { rows, ms: performance.now() - started };
}

interface CliRun {
  code: number | null;
  wallMs: number;
  /** Times servicectl redrew its progress line. */
  redraws: number;
  /** The last progress line drawn, as text. */
  lastProgress: string;
  deletedReported: number | undefined;
  resultBytes: number;
}

/**
 * servicectl under a pseudo-terminal, as an operator at a terminal runs it. Everything it writes comes
 * back through `script`; progress redraws (`\r` + erase line) are relayed to our stderr when it is a
 * terminal, the result (tens of thousands of JIDs) is only measured.
 */
function runServicectl(configFile: string, args: string[]): Promise<CliRun> {
  const command = [process.execPath, SERVICECTL, '--config', configFile, ...args].map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, COLUMNS: '100' } });
    let text = '';
    let redraws = 0;
    let lastProgress = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      text += chunk;
      for (const draw of chunk.matchAll(/\r\x1b\[2K([^\r\n]*)/g)) {
        if (!draw[1]) continue;
        redraws++;
        lastProgress = draw[1];
        if (process.stderr.isTTY) process.stderr.write(`\r\x1b[2K[servicectl] ${draw[1]}`);
      }
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (process.stderr.isTTY && redraws) process.stderr.write('\n');
      const reported = /Deleted (\d+) users/.exec(text);
      resolve({ code, wallMs: performance.now() - started, redraws, lastProgress: lastProgress.trim(), deletedReported: reported ? Number(reported[1]) : undefined, resultBytes: Buffer.byteLength(text) });
    });
  });
}

async function main(): Promise<void> {
  requireBuild();
  const dir = await mkdtemp(join(tmpdir(), 'bench-delete-old-users-'));
  const dataDir = join(dir, 'data');
  const configFile = join(dir, 'service.yml');
  const dbFile = join(dataDir, 'service.db');
  const port = await freePort();
  const notes: string[] = [];
  const started = new Date();
  const base = benchConfig({ port, dataDir, loglevel: 'warning' });
  await writeConfig(configFile, {
    ...base,
    access_rules: { ...(base.access_rules as Record<string, unknown>), protect_old_users: [{ allow: 'admin' }, { deny: 'all' }] },
    modules: Object.fromEntries(MODULES.map((m) => [m, {}])),
  });

  log(`starting the server on 127.0.0.1:${port}, data in ${dataDir}`);
  const server = await startServer({ configFile, port, logFile: join(dir, 'server.log') });
  let result: Record<string, unknown>;
  try {
    const now = Date.now();
    const seeded = await seedAccounts(dbFile, { count: USERS, adminPassword: ADMIN_PASSWORD, userPassword: 'bench-user-pass' });
    const activity = await seedLastActivity(dbFile, now);
    log(`seeded ${seeded.inserted} accounts in ${Math.round(seeded.ms)} ms and ${activity.rows} last-activity rows in ${Math.round(activity.ms)} ms`);
    const expectDeleted = Array.from({ length: USERS }, (_, i) => fateOf(i)).filter((f) => f !== 'recent').length;
    const expectKept = USERS + 1 - expectDeleted;
    const before = await callApi(port, 'stats_host', { name: 'registeredusers', host: HOST }, AUTH);
    if (before.status !== 200 || before.body !== USERS + 1) throw new Error(`stats_host answered ${before.status} ${JSON.stringify(before.body)}; expected ${USERS + 1}`);

    const backgroundPct = await waitQuiet(25, 120, (pct) => log(`the machine is busy (${pct}% of a core): waiting for it to calm down`));
    log(`servicectl delete_old_users_vhost ${HOST} ${DAYS} (expecting ${expectDeleted} deletions)`);
    let peakRss = rssMb(server.pid) ?? 0;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(server.pid) ?? 0)), 250);
    const cpuBefore = cpuSnapshot(server.pid);
    const run = await runServicectl(configFile, ['delete_old_users_vhost', HOST, String(DAYS)]);
    const cpu: CpuUse = cpuBetween(cpuBefore, cpuSnapshot(server.pid));
    clearInterval(sampler);
    if (run.code !== 0) throw new Error(`servicectl exited with ${run.code}`);

    const after = await callApi(port, 'stats_host', { name: 'registeredusers', host: HOST }, AUTH);
    const admin = await callApi(port, 'check_account', { user: 'admin', host: HOST }, AUTH);
    if (run.deletedReported !== expectDeleted) notes.push(`servicectl reported ${run.deletedReported} deletions, expected ${expectDeleted}`);
    if (after.body !== expectKept) notes.push(`${after.body} accounts remain, expected ${expectKept}`);
    if (admin.body !== 0) notes.push('admin@localhost was deleted although protect_old_users protects it');
    if (run.redraws === 0) notes.push('servicectl drew no progress (it draws after the first second; was the run shorter?)');
    if (cpu.machinePct - cpu.serverProcessPct > 30) notes.push(`other work used ${round1(cpu.machinePct - cpu.serverProcessPct)}% of a core during the run: not a figure to quote`);

    const seconds = run.wallMs / 1000;
    result = {
      accounts: USERS + 1,
      deleted: run.deletedReported,
      kept: after.body,
      wallS: round1(seconds),
      examinedPerS: Math.round((USERS + 1) / seconds),
      deletedPerS: Math.round((run.deletedReported ?? 0) / seconds),
      cpu,
      peakRssMb: peakRss,
      progressRedraws: run.redraws,
      lastProgress: run.lastProgress,
      resultBytes: run.resultBytes,
      backgroundPct,
      seeded,
      activity,
    };
  } finally {
    const code = await server.stop();
    if (code !== 0) notes.push(`the server exited with code ${code} on SIGINT`);
    if (!opts.keep) await rm(dir, { recursive: true, force: true });
    else log(`kept ${dir}`);
  }

  const machine = machineInfo();
  const r = result as { accounts: number; deleted: number; kept: number; wallS: number; examinedPerS: number; deletedPerS: number; cpu: CpuUse; peakRssMb: number; progressRedraws: number; lastProgress: string };
  console.log(`\n## delete_old_users_vhost benchmark (${started.toISOString()})\n`);
  console.log(`${machine.cpuModel}, ${machine.cores} cores, ${machine.ramGiB} GiB, Node ${machine.node}, ${machine.os}`);
  console.log(`SQLite; modules: ${MODULES.join(', ')}; days ${DAYS}; servicectl on a pseudo-terminal\n`);
  console.log('| accounts | deleted | kept | wall s | accounts examined/s | deleted/s | server CPU % (process) | server CPU % (main thread) | peak RSS MB | progress redraws | last progress line |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  console.log(
    `| ${r.accounts.toLocaleString('en-US')} | ${r.deleted?.toLocaleString('en-US')} | ${r.kept.toLocaleString('en-US')} | ${r.wallS} | ${r.examinedPerS.toLocaleString('en-US')} | ${r.deletedPerS.toLocaleString('en-US')} | ` +
      `${r.cpu.serverProcessPct} | ${r.cpu.serverMainThreadPct} | ${r.peakRssMb} | ${r.progressRedraws} | \`${r.lastProgress.replace(/\|/g, '\\|')}\` |`,
  );
  console.log('\nCPU % is of one core. The wall time is servicectl\'s, from start to exit: connection, the deletions, and printing the list of deleted JIDs.');
  for (const n of notes) console.log(`\nNote: ${n}`);

  await mkdir(RESULTS_DIR, { recursive: true });
  const out = join(RESULTS_DIR, `delete-old-users-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(out, `${JSON.stringify({ startedAt: started.toISOString(), machine, settings: { users: USERS, days: DAYS, modules: MODULES }, notes, result }, null, 2)}\n`);
  console.log(`\nRaw results: ${relative(REPO, out)}`);
  if (notes.some((n) => !n.startsWith('other work'))) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
