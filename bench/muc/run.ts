/**
 * bench/muc: group chat fan-out and memory, this server against Debian's ejabberd 23.01 without MAM
 * (the kit's ejabberd-nomam profile; this server without mod_mam), back to back on this machine. The issue's goal is
 * at least 1.5× ejabberd's delivered stanzas/s at p99 < 200 ms; the ratios of one run are what to quote.
 *
 *   npm run bench:muc -- [--occupants 200,500] [--reps 1] [--kit ../shared/bench-kit] [--workers auto|N]
 *                        [--rates 10,20,40,…] [--rooms 1000] [--quick] [--targets both|ours|ejabberd]
 *
 * For each target: memory per room first, on a fresh server (the profile's target_reset): RSS of every server
 * process (ours: the primary and its workers, as service.env's target_pid lists them) once settled, then
 * `--rooms` empty rooms created through the HTTP API's `create_room` (ours: POST :45280/api as admin; ejabberd:
 * its API_BASE, from loopback), RSS once settled again; per room = growth / rooms listed by muc_online_rooms.
 * Then, for each occupant count, the kit's muc-fanout scenario with MUC_N=<count> against this server, then
 * ejabberd-nomam, one repetition at a time (reset here, wait for RSS to settle, then the kit with --no-reset):
 * delivered stanzas/s at p99 < 200 ms and at most, from the kit's summary.json, and memory per occupant from its
 * rep1.json: RSS with the N sessions online before the room exists (the kit's reading right after the logins),
 * after the N occupants joined (read here when the kit's generator logs the join, over the pids it measures),
 * and at the end of the ramp; per occupant = (after join − before) / occupants.
 * "Settled": RSS within 1 MiB for --settle s; a fresh Node process returns its start-up memory to the system in
 * steps of ~35 MiB for up to a minute, which would otherwise pass for negative memory per room or occupant.
 * MUC_RATES, MUC_STEP and MUC_WARM in the environment reach the kit (--rates sets MUC_RATES).
 * Writes bench/results/muc-<time>/ (muc.md, muc.json, the kit's result directories and logs) and prints the table.
 */
import { closeSync, cpSync, existsSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO, RESULTS_DIR, machineInfo } from '../api/lib.js';
import { Kit, OURS, format, median, profileName, type Summary } from '../side-by-side/kit.js';

const { values: opts } = parseArgs({
  options: {
    occupants: { type: 'string', default: '200,500' },
    reps: { type: 'string', default: '1' },
    kit: { type: 'string', default: join(REPO, '../shared/bench-kit') },
    /** The `workers` option of the server's configuration; config.example.yml's by default. */
    workers: { type: 'string' },
    /** The offered groupchat messages/s of the ramp (the kit's MUC_RATES); the kit's list by default. */
    rates: { type: 'string' },
    /** Empty rooms created to measure the memory of one. */
    rooms: { type: 'string', default: '1000' },
    /** create_room_with_opts calls in flight. */
    'room-conc': { type: 'string', default: '8' },
    /**
     * Seconds over which the server's RSS must stay within 1 MiB before a reading that a difference starts from
     * (a fresh Node process returns start-up memory in steps of ~35 MiB for up to a minute), 150 s at most.
     */
    settle: { type: 'string', default: '30' },
    /** Which servers to run: both (the comparison), or `ours` / `ejabberd` alone (to check the script). */
    targets: { type: 'string', default: 'both' },
    /** The kit's --quick: its short ramp (10,20,40 msgs/s) unless --rates is given. */
    quick: { type: 'boolean', default: false },
  },
});

const THEIRS = 'ejabberd-nomam';
const SVC_DIR = '/tmp/service-bench-muc';
const log = (text: string) => console.error(`[muc] ${text}`);
const positive = (text: string, what: string) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${what}: '${text}' is not a positive integer`);
  return n;
};
const OCCUPANTS = opts.occupants.split(',').map((s) => s.trim()).filter(Boolean).map((s) => positive(s, '--occupants'));
const ROOMS = positive(opts.rooms, '--rooms');
const REPS = positive(opts.reps, '--reps');
const SETTLE_MS = Number(opts.settle) * 1000;
const SETTLE_MAX_MS = 150_000;
if (!['both', 'ours', 'ejabberd'].includes(opts.targets)) throw new Error(`--targets: '${opts.targets}' is not both, ours or ejabberd`);
const RUN_OURS = opts.targets !== 'ejabberd';
const RUN_THEIRS = opts.targets !== 'ours';

// ---------------------------------------------------------------------------------------------------------
// RSS of a set of processes, from /proc

function rssKiB(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}
const sumRss = (pids: readonly number[]) => pids.reduce((sum, pid) => sum + rssKiB(pid), 0);
const parsePids = (text: string) => text.replace(/\\/g, '').split(',').map(Number).filter((pid) => Number.isInteger(pid) && pid > 0);

/**
 * Waits until the processes' RSS has stayed within 1 MiB for SETTLE_MS (SETTLE_MAX_MS at most), reading it every
 * 2 s, and returns the last reading and how long that took.
 */
async function settledRss(pids: readonly number[]): Promise<{ rssKib: number; waitedS: number; settled: boolean }> {
  const started = Date.now();
  const readings: Array<{ t: number; rss: number }> = [];
  for (;;) {
    const t = Date.now();
    readings.push({ t, rss: sumRss(pids) });
    const window = readings.filter((r) => r.t >= t - SETTLE_MS);
    const span = Math.max(...window.map((r) => r.rss)) - Math.min(...window.map((r) => r.rss));
    const waited = t - started;
    if (waited >= SETTLE_MS && span < 1024) return { rssKib: readings.at(-1)!.rss, waitedS: waited / 1000, settled: true };
    if (waited >= SETTLE_MAX_MS) return { rssKib: readings.at(-1)!.rss, waitedS: waited / 1000, settled: false };
    await sleep(2000);
  }
}

/** The profile's own reset (fresh data, started), then what the kit would use: pids, API base and credentials. */
async function resetTarget(profile: string, logFile: string): Promise<Record<string, string>> {
  const printed = await kit.profileShell(
    profile,
    `target_reset; sleep 2
     echo "PIDS=$(target_pid)"; echo "API_BASE=\${API_BASE:-}"; echo "API_BASIC_CRED=\${API_BASIC_CRED:-}"
     echo "XMPP_DOMAIN=$XMPP_DOMAIN"; echo "MUC_SERVICE=\${MUC_SERVICE:-conference.$XMPP_DOMAIN}"`,
    logFile,
  );
  const vars = Object.fromEntries(printed.split('\n').map((l) => /^([A-Z_]+)=(.*)$/.exec(l)).filter((m) => m !== null).map((m) => [m[1]!, m[2]!]));
  if (parsePids(vars.PIDS ?? '').length === 0) throw new Error(`${profileName(profile)}: target_pid printed nothing after target_reset: see ${logFile}`);
  return vars;
}

const mid = (values: ReadonlyArray<number | undefined>): number | undefined => {
  const known = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  if (known.length === 0) return undefined;
  const half = Math.floor(known.length / 2);
  return known.length % 2 ? known[half] : (known[half - 1]! + known[half]!) / 2;
};

// ---------------------------------------------------------------------------------------------------------
// Memory after the join: the kit does not sample it, so this watches the kit's log for the generator's
// "muc: N occupants joined" line and reads RSS then, over the pids the kit's generator measures (its
// --server-pid, from the command line run.sh records in commands.txt). The generator waits 2 s after the
// join before the ramp; this polls every 100 ms.

type JoinSample = { pids: number[]; occupants: number; rssKib: number; at: string };

class JoinWatcher {
  readonly samples: JoinSample[] = [];
  #offset = 0;
  #timer: NodeJS.Timeout;
  #partial = '';

  constructor(
    private readonly outDir: string,
    private readonly logFile: string,
  ) {
    this.#offset = existsSync(logFile) ? statSync(logFile).size : 0;
    this.#timer = setInterval(() => this.#poll(), 100);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#poll();
  }

  #poll(): void {
    if (!existsSync(this.logFile)) return;
    const size = statSync(this.logFile).size;
    if (size <= this.#offset) return;
    const buffer = Buffer.alloc(size - this.#offset);
    const fd = openSync(this.logFile, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, this.#offset);
    } finally {
      closeSync(fd);
    }
    this.#offset = size;
    const lines = (this.#partial + buffer.toString('utf8')).split('\n');
    this.#partial = lines.pop() ?? '';
    for (const line of lines) {
      const joined = /\[xmppbench\] muc: (\d+) occupants joined/.exec(line);
      if (!joined) continue;
      const pids = this.#kitPids();
      if (pids.length === 0) continue;
      this.samples.push({ pids, occupants: Number(joined[1]), rssKib: sumRss(pids), at: new Date().toISOString() });
    }
  }

  /** The --server-pid of the last `xmppbench.mjs muc` command run.sh recorded. */
  #kitPids(): number[] {
    const commands = join(this.outDir, 'commands.txt');
    if (!existsSync(commands)) return [];
    const lines = readFileSync(commands, 'utf8').split('\n').filter((l) => /xmppbench\.mjs muc /.test(l));
    const match = /--server-pid (\S+)/.exec(lines.at(-1) ?? '');
    return match ? parsePids(match[1]!) : [];
  }
}

// ---------------------------------------------------------------------------------------------------------
// Fan-out: the kit's muc-fanout at one occupant count against one target

type FanoutRep = {
  rep: string;
  occupants: number | undefined;
  pids: number[];
  /** RSS once settled after the reset, before the kit's provisioning (and how long that took; undefined: it did not settle). */
  settledRssKib: number;
  settledAfterS: number | undefined;
  rssBaselineKib: number | undefined;
  rssBeforeRoomKib: number | undefined;
  rssAfterJoinKib: number | undefined;
  rssEndKib: number | undefined;
  rssAfterLogoutKib: number | undefined;
  kibPerOccupant: number | undefined;
  joinMs: number | undefined;
  /** The ramp's last step still passed (p99 < 200 ms, nothing lost): the server never saturated, the figures are floors. */
  unsaturated: boolean;
};

type Fanout = {
  n: number;
  target: string;
  label: string;
  out: string;
  /** The kit's summary row (median (min..max) of each figure over the repetitions). */
  summary: Record<string, any>;
  /** The last try of a repetition was disturbed by other processes (the kit gave up repeating it). */
  disturbed: boolean;
  reps: FanoutRep[];
};

/**
 * The kit's muc-fanout, one repetition at a time: this script resets the target and waits for its RSS to settle
 * (settledRss), then runs the kit with --no-reset, so that the kit's RSS reading before the room is not taken
 * while a fresh server still returns its start-up memory.
 */
async function fanout(n: number, profile: string, dir: string): Promise<Fanout> {
  const env: Record<string, string> = { MUC_N: String(n) };
  if (opts.rates) env.MUC_RATES = opts.rates;
  const reps: FanoutRep[] = [];
  const summaries: Summary[] = [];
  let disturbed = false;
  for (let r = 1; r <= REPS; r++) {
    const name = `${profileName(profile)}-muc-fanout-n${n}-rep${r}`;
    const out = join(dir, name);
    const logFile = join(dir, `${name}.log`);
    const vars = await resetTarget(profile, logFile);
    const settle = await settledRss(parsePids(vars.PIDS!));
    log(`${profileName(profile)} N=${n} rep ${r}: RSS ${settle.settled ? 'settled' : 'still moving'} after ${settle.waitedS.toFixed(0)} s at ${(settle.rssKib / 1024).toFixed(1)} MiB`);
    const watcher = new JoinWatcher(out, logFile);
    try {
      const run = await kit.runScenario('muc-fanout', profile, dir, { reps: '1', noReset: true, quick: opts.quick && !opts.rates, env, name, summarizeDisturbed: true });
      summaries.push(run.summary);
      disturbed ||= run.disturbed;
    } finally {
      watcher.stop();
    }
    const rep = JSON.parse(await readFile(join(out, 'rep1.json'), 'utf8')) as Record<string, any>;
    const pids: number[] = rep.params?.server_pids ?? [];
    const occupants: number | undefined = rep.muc?.occupants;
    const joinSample = watcher.samples.filter((s) => s.pids.join(',') === pids.join(',')).at(-1);
    const before: number | undefined = rep.login?.server_rss_kib;
    const steps: Array<Record<string, any>> = rep.steps ?? [];
    reps.push({
      rep: join(name, 'rep1.json'),
      occupants,
      pids,
      settledRssKib: settle.rssKib,
      settledAfterS: settle.settled ? settle.waitedS : undefined,
      rssBaselineKib: rep.baseline?.server_rss_kib,
      rssBeforeRoomKib: before,
      rssAfterJoinKib: joinSample?.rssKib,
      rssEndKib: steps.at(-1)?.server_rss_kib,
      rssAfterLogoutKib: rep.teardown?.server_rss_kib_after_logout,
      kibPerOccupant: joinSample && before !== undefined && occupants ? (joinSample.rssKib - before) / occupants : undefined,
      joinMs: rep.muc?.join_ms,
      unsaturated: steps.length > 0 && steps.at(-1)!.latency?.p99_ms < 200 && steps.at(-1)!.delivered_total >= 0.999 * steps.at(-1)!.expected,
    });
  }
  // One summary row over the repetitions, as the kit's (each figure: median, min, max over the repetitions).
  const keys = [...new Set(summaries.flatMap((x) => Object.keys(x.rows[0] ?? {})))];
  const summary = Object.fromEntries(
    keys.map((key) => {
      const values = summaries.map((x) => median(x.rows[0]?.[key])).filter((v): v is number => v !== undefined);
      return [key, values.length ? { median: mid(values), min: Math.min(...values), max: Math.max(...values), n: values.length } : null];
    }),
  );
  return { n, target: profileName(profile), label: summaries[0]?.label ?? '', out: dir, summary, disturbed, reps };
}

// ---------------------------------------------------------------------------------------------------------
// Memory per room: empty rooms created through the HTTP API on a fresh server

type RoomsRep = {
  pids: number[];
  requested: number;
  created: number;
  failed: number;
  firstError?: string;
  listed: number | undefined;
  seconds: number;
  rssBeforeKib: number;
  rssAfterKib: number;
  /** Whether RSS settled (see --settle) before both readings. */
  settled: boolean;
  /** Each process's RSS at the two readings (KiB), to see where the rooms live. */
  byPid: Record<string, { beforeKib: number; afterKib: number }>;
  kibPerRoom: number | undefined;
};

type Rooms = { target: string; reps: RoomsRep[] };

async function api(base: string, command: string, body: unknown, auth: string | undefined): Promise<{ status: number; body: string }> {
  const response = await fetch(`${base.replace(/\/$/, '')}/${command}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, body: await response.text() };
}

/**
 * The rooms are persistent (create_room_with_opts persistent=true): ejabberd 23.01 stops an empty temporary
 * room (200 created with create_room were listed 2 s later, none 30 s later): only persistent ones stay.
 */
const PERSISTENT = [{ name: 'persistent', value: 'true' }];

async function roomsOnce(profile: string, dir: string, rep: number): Promise<RoomsRep> {
  const name = profileName(profile);
  const logFile = join(dir, `${name}-rooms.log`);
  log(`memory per room against ${name}, rep ${rep}: ${ROOMS} empty rooms (log: ${logFile})`);
  const vars = await resetTarget(profile, logFile);
  try {
    const pids = parsePids(vars.PIDS!);
    if (!vars.API_BASE) throw new Error(`${name}: the profile has no API_BASE`);
    // Ours: create_room is an admin command (loopback may only run the public ones). ejabberd's bench
    // configuration lets loopback run everything, as the kit's provisioning does.
    const auth = profile === OURS && vars.API_BASIC_CRED ? `Basic ${Buffer.from(vars.API_BASIC_CRED).toString('base64')}` : undefined;
    // ejabberd 23.01 names the room `name`; this server calls it `room` (and takes `name` from older API versions).
    const roomKey = profile === OURS ? 'room' : 'name';
    const service = vars.MUC_SERVICE!;
    const before = await settledRss(pids);
    const rssBeforeKib = before.rssKib;
    const byPid: RoomsRep['byPid'] = Object.fromEntries(pids.map((pid) => [String(pid), { beforeKib: rssKiB(pid), afterKib: 0 }]));
    let next = 1;
    let created = 0;
    let failed = 0;
    let firstError: string | undefined;
    const started = performance.now();
    const worker = async () => {
      while (next <= ROOMS) {
        const i = next++;
        try {
          const result = await api(vars.API_BASE!, 'create_room_with_opts', { [roomKey]: `mucbench${i}`, service, host: vars.XMPP_DOMAIN, options: PERSISTENT }, auth);
          if (result.status === 200 && result.body.trim() === '0') created++;
          else {
            failed++;
            firstError ??= `HTTP ${result.status}: ${result.body.slice(0, 300)}`;
          }
        } catch (err) {
          failed++;
          firstError ??= (err as Error).message;
        }
      }
    };
    await Promise.all(Array.from({ length: positive(opts['room-conc'], '--room-conc') }, worker));
    const seconds = (performance.now() - started) / 1000;
    const after = await settledRss(pids);
    const rssAfterKib = after.rssKib;
    for (const pid of pids) byPid[String(pid)]!.afterKib = rssKiB(pid);
    let listed: number | undefined;
    try {
      const result = await api(vars.API_BASE, 'muc_online_rooms', { service }, auth);
      const rooms = JSON.parse(result.body) as unknown;
      if (result.status === 200 && Array.isArray(rooms)) listed = rooms.filter((r) => String(r).startsWith('mucbench')).length;
      else firstError ??= `muc_online_rooms: HTTP ${result.status}: ${result.body.slice(0, 300)}`;
    } catch (err) {
      firstError ??= `muc_online_rooms: ${(err as Error).message}`;
    }
    if (failed > 0) log(`${name}: ${failed} create_room call(s) failed, the first: ${firstError}`);
    if (listed !== undefined && listed !== created) log(`${name}: ${created} rooms created, ${listed} listed by muc_online_rooms`);
    return {
      pids,
      requested: ROOMS,
      created,
      failed,
      firstError,
      listed,
      seconds,
      rssBeforeKib,
      rssAfterKib,
      settled: before.settled && after.settled,
      byPid,
      kibPerRoom: created > 0 ? (rssAfterKib - rssBeforeKib) / created : undefined,
    };
  } finally {
    await kit.run(['stop', '--target', profile], logFile);
  }
}

async function rooms(profile: string, dir: string): Promise<Rooms> {
  const reps: RoomsRep[] = [];
  for (let rep = 1; rep <= REPS; rep++) reps.push(await roomsOnce(profile, dir, rep));
  return { target: profileName(profile), reps };
}

// ---------------------------------------------------------------------------------------------------------
// The table

type Row = { figure: string; ejabberd: number | undefined; ours: number | undefined; better: 'higher' | 'lower' | ''; digits?: number; goal?: number };

const ratio = (row: Row) => (row.ours === undefined || row.ejabberd === undefined || row.ejabberd === 0 ? undefined : row.ours / row.ejabberd);
const goalCell = (row: Row) => {
  if (row.goal === undefined) return '';
  const r = ratio(row);
  return r === undefined ? `≥ ${row.goal}×: n/a` : `≥ ${row.goal}×: ${r >= row.goal ? 'met' : 'not met'}`;
};
const mib = (kib: number | undefined) => (kib === undefined ? undefined : kib / 1024);

function fanoutRows(n: number, ours: Fanout | undefined, theirs: Fanout | undefined): Row[] {
  const pick = (f: Fanout | undefined, key: string) => median(f?.summary[key]);
  const rep = (f: Fanout | undefined, key: keyof FanoutRep) => mid((f?.reps ?? []).map((r) => r[key] as number | undefined));
  return [
    { figure: `N=${n}: delivered stanzas/s at p99 < 200 ms`, ejabberd: pick(theirs, 'max_delivered_per_s_with_p99_lt_200ms'), ours: pick(ours, 'max_delivered_per_s_with_p99_lt_200ms'), better: 'higher', digits: 0, goal: 1.5 },
    { figure: `N=${n}: … offered groupchat msgs/s there`, ejabberd: pick(theirs, 'at_offered_rate'), ours: pick(ours, 'at_offered_rate'), better: '', digits: 0 },
    { figure: `N=${n}: … p99 ms there`, ejabberd: pick(theirs, 'at_p99_ms'), ours: pick(ours, 'at_p99_ms'), better: 'lower', digits: 1 },
    { figure: `N=${n}: … server CPU % there`, ejabberd: pick(theirs, 'at_server_cpu_pct'), ours: pick(ours, 'at_server_cpu_pct'), better: '', digits: 0 },
    { figure: `N=${n}: max sustained delivered stanzas/s`, ejabberd: pick(theirs, 'max_delivered_per_s'), ours: pick(ours, 'max_delivered_per_s'), better: 'higher', digits: 0 },
    { figure: `N=${n}: occupants joined`, ejabberd: pick(theirs, 'occupants'), ours: pick(ours, 'occupants'), better: '', digits: 0 },
    { figure: `N=${n}: join time of all occupants, ms`, ejabberd: rep(theirs, 'joinMs'), ours: rep(ours, 'joinMs'), better: 'lower', digits: 0 },
    { figure: `N=${n}: RSS MiB, settled after the reset (no session)`, ejabberd: mib(rep(theirs, 'settledRssKib')), ours: mib(rep(ours, 'settledRssKib')), better: 'lower', digits: 1 },
    { figure: `N=${n}: RSS MiB, N sessions online, no room`, ejabberd: mib(rep(theirs, 'rssBeforeRoomKib')), ours: mib(rep(ours, 'rssBeforeRoomKib')), better: 'lower', digits: 1 },
    { figure: `N=${n}: RSS MiB after the N occupants joined`, ejabberd: mib(rep(theirs, 'rssAfterJoinKib')), ours: mib(rep(ours, 'rssAfterJoinKib')), better: 'lower', digits: 1 },
    { figure: `N=${n}: RSS MiB at the end of the ramp`, ejabberd: mib(rep(theirs, 'rssEndKib')), ours: mib(rep(ours, 'rssEndKib')), better: 'lower', digits: 1 },
    { figure: `N=${n}: KiB per occupant (after join − before) / N`, ejabberd: rep(theirs, 'kibPerOccupant'), ours: rep(ours, 'kibPerOccupant'), better: 'lower', digits: 2 },
  ];
}

function roomRows(ours: Rooms | undefined, theirs: Rooms | undefined): Row[] {
  const per = (r: Rooms | undefined) => mid((r?.reps ?? []).map((x) => x.kibPerRoom));
  const listed = (r: Rooms | undefined) => mid((r?.reps ?? []).map((x) => x.listed));
  const created = (r: Rooms | undefined) => mid((r?.reps ?? []).map((x) => x.created));
  const rate = (r: Rooms | undefined) => mid((r?.reps ?? []).map((x) => (x.seconds > 0 ? x.created / x.seconds : undefined)));
  return [
    { figure: `rooms: KiB per empty persistent room (${ROOMS} created)`, ejabberd: per(theirs), ours: per(ours), better: 'lower', digits: 2 },
    { figure: 'rooms: rooms created', ejabberd: created(theirs), ours: created(ours), better: '', digits: 0 },
    { figure: 'rooms: of those, listed by muc_online_rooms after', ejabberd: listed(theirs), ours: listed(ours), better: '', digits: 0 },
    { figure: `rooms: create_room_with_opts calls/s (${opts['room-conc']} in flight)`, ejabberd: rate(theirs), ours: rate(ours), better: 'higher', digits: 0 },
  ];
}

/**
 * Both servers refuse a 201st occupant by default (ejabberd's mod_muc and ours: max_users 200), so a larger
 * room needs a larger limit on both: ours in its configuration, ejabberd's in a copy of the kit (the shared
 * kit is read-only) whose ejabberd-nomam template sets mod_muc's max_users and the rooms' default to it.
 */
const ROOM_LIMIT = Math.max(200, ...OCCUPANTS);

function kitAllowing(kitDir: string, limit: number): string {
  if (limit <= 200) return kitDir;
  const copy = `/tmp/bench-kit-muc-${limit}`;
  rmSync(copy, { recursive: true, force: true });
  cpSync(kitDir, copy, { recursive: true });
  execFileSync('chmod', ['-R', 'u+w', copy]);
  const template = join(copy, 'bench/targets/ejabberd-nomam/ejabberd.yml.tmpl');
  const text = readFileSync(template, 'utf8');
  const patched = text.replace(/^(  mod_muc:\n)/m, `$1    max_users: ${limit}\n`).replace(/^(    default_room_options:\n)/m, `$1      max_users: ${limit}\n`);
  if (!patched.includes(`    max_users: ${limit}\n`) || !patched.includes(`      max_users: ${limit}\n`)) throw new Error(`could not set max_users in ${template}: its mod_muc section changed`);
  writeFileSync(template, patched);
  return copy;
}

const kit = new Kit(kitAllowing(opts.kit, ROOM_LIMIT), SVC_DIR, 'muc');

async function main(): Promise<void> {
  kit.check();
  if (RUN_OURS && !existsSync(join(REPO, 'modules/mod_muc/dist/index.js'))) throw new Error('modules/mod_muc is not built (modules/mod_muc/dist/index.js): npm run build');
  // muc-fanout needs group chat: config.example.yml's modules, plus mod_muc when the example does not list it yet.
  const roomLimit: Record<string, Record<string, unknown>> = ROOM_LIMIT > 200 ? { mod_muc: { max_users: ROOM_LIMIT, default_room_options: { max_users: ROOM_LIMIT } } } : {};
  // ejabberd runs without MAM here (ejabberd-nomam): so does this server.
  const { workers, added } = await kit.writeServerConfig(opts.workers, { mod_muc: {} }, roomLimit, ['mod_mam']);
  if (ROOM_LIMIT > 200) log(`both servers allow ${ROOM_LIMIT} occupants per room (mod_muc max_users; ejabberd's template in ${kit.dir})`);
  log(`this server runs with workers: ${workers}${added.length ? `; added to the example's modules: ${added.join(', ')}` : ''}`);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const dir = join(RESULTS_DIR, `muc-${stamp}`);
  await mkdir(dir, { recursive: true });
  const started = new Date().toISOString();

  const roomsOurs = RUN_OURS ? await rooms(OURS, dir) : undefined;
  const roomsTheirs = RUN_THEIRS ? await rooms(THEIRS, dir) : undefined;
  const fanouts: Array<{ n: number; ours?: Fanout; theirs?: Fanout }> = [];
  for (const n of OCCUPANTS) {
    const ours = RUN_OURS ? await fanout(n, OURS, dir) : undefined;
    const theirs = RUN_THEIRS ? await fanout(n, THEIRS, dir) : undefined;
    fanouts.push({ n, ours, theirs });
  }

  const rows = [...fanouts.flatMap(({ n, ours, theirs }) => fanoutRows(n, ours, theirs)), ...roomRows(roomsOurs, roomsTheirs)];
  const machine = machineInfo();
  const date = new Date().toISOString();
  const rates = opts.rates ?? process.env.MUC_RATES ?? (opts.quick ? '10,20,40 (the kit\'s --quick)' : 'the kit\'s default list');
  const runs = fanouts.flatMap(({ ours, theirs }) => [ours, theirs]).filter((f): f is Fanout => f !== undefined);
  const missingJoin = runs.filter((f) => f.reps.some((r) => r.rssAfterJoinKib === undefined));
  const lines = [
    `## Group chat fan-out, side by side with ejabberd 23.01 without MAM (${date})`,
    '',
    `${machine.cpuModel}, ${machine.cores} cores, ${machine.ramGiB} GiB, ${machine.os}, Node ${machine.node}. Started ${started}; the kit at ${kit.dir}, ${REPS} repetition(s); ` +
      `this server with workers: ${workers}${added.length ? ` (and ${added.join(', ')}, which config.example.yml lacks)` : ''}; ejabberd = the kit's ${THEIRS} profile. ` +
      `One sender posts groupchat messages at the offered rates (MUC_RATES: ${rates}${process.env.MUC_STEP ? `, MUC_STEP ${process.env.MUC_STEP} s` : ''}); every occupant, the sender included, receives each one.`,
    '',
    '| figure | ejabberd 23.01 (no MAM) | this server | ratio (ours / ejabberd) | better | goal |',
    '|---|---:|---:|---:|---|---|',
    ...rows.map((r) => `| ${r.figure} | ${format(r.ejabberd, r.digits)} | ${format(r.ours, r.digits)} | ${format(ratio(r), 2)} | ${r.better} | ${goalCell(r)} |`),
    '',
    '- The goal (the issue): at least 1.5× ejabberd 23.01 on the same machine. Its reference: ejabberd without MAM delivers 40 000 stanzas/s to 200 occupants at p99 < 200 ms, and 58 700 at most; compare the ratios of one run, not absolute figures across runs.',
    '- RSS is the sum over every server process (ours: the primary and its workers; ejabberd: the BEAM). "N sessions online, no room" is the kit\'s reading right after the logins; "after the N occupants joined" is read when the generator reports the join (2 s before its ramp); per occupant = the difference / occupants.',
    `- Every RSS reading a difference starts from waits for RSS to stay within 1 MiB for ${opts.settle} s (at most ${SETTLE_MAX_MS / 1000} s): a fresh Node process returns start-up memory in steps of ~35 MiB for up to a minute. The fan-out runs one repetition at a time: reset, settle, then the kit with --no-reset.`,
    `- Per room: ${ROOMS} empty persistent rooms created through create_room_with_opts on a fresh server (ejabberd 23.01 stops empty temporary ones: all were listed 2 s after, none 30 s after), RSS read once settled before and after, the growth divided by the rooms created; muc_online_rooms should list them all.`,
    ...[...(roomsOurs?.reps ?? []), ...(roomsTheirs?.reps ?? [])].flatMap((r) =>
      Object.entries(r.byPid)
        .filter(([, x]) => x.beforeKib - x.afterKib > 8192)
        .map(([pid, x]) => `- rooms: process ${pid}'s RSS fell by ${((x.beforeKib - x.afterKib) / 1024).toFixed(1)} MiB between the readings (V8 returning memory, likely): per room is understated; muc.json has each process's readings.`),
    ),
    ...[...(roomsOurs?.reps ?? []), ...(roomsTheirs?.reps ?? [])].filter((r) => !r.settled).map((r) => `- rooms on pids ${r.pids.join(',')}: RSS did not settle within ${SETTLE_MAX_MS / 1000} s: per room is approximate.`),
    ...runs.flatMap((f) => f.reps.filter((r) => r.settledAfterS === undefined).map(() => `- ${f.target} N=${f.n}: RSS did not settle within ${SETTLE_MAX_MS / 1000} s before the kit started: per occupant is approximate.`)),
    ...(opts.targets === 'both' ? [] : [`- Only ${opts.targets === 'ours' ? 'this server' : 'ejabberd'} ran (--targets ${opts.targets}): no ratio.`]),
    ...[...(roomsOurs?.reps ?? []), ...(roomsTheirs?.reps ?? [])].filter((r) => r.failed > 0 || r.firstError).map((r) => `- create_room: ${r.failed} of ${r.requested} failed on pids ${r.pids.join(',')}; first error: ${r.firstError}`),
    ...runs.filter((f) => f.disturbed).map((f) => `- ${f.target} N=${f.n}: **disturbed**: other processes used more than OTHER_MAX (${process.env.OTHER_MAX ?? 25} %) of a core in every try the kit made of a repetition (see its log): not worth quoting.`),
    ...runs.filter((f) => f.reps.some((r) => r.unsaturated)).map((f) => `- ${f.target} N=${f.n}: the ramp's last rate still passed (p99 < 200 ms, nothing lost): it did not saturate, its figures are floors; raise MUC_RATES (--rates).`),
    ...runs.filter((f) => f.reps.some((r) => r.occupants !== f.n)).map((f) => `- ${f.target} N=${f.n}: only ${f.reps.map((r) => r.occupants ?? 0).join(', ')} of ${f.n} occupants joined (the generator waits 30 s for each join): the figures are not for N occupants.`),
    ...missingJoin.map((f) => `- ${f.target} N=${f.n}: no RSS reading after the join in some repetition (the generator's join line was not seen): per occupant is missing there.`),
    ...fanouts.map(({ n, ours, theirs }) => `- N=${n}: ours = ${ours?.label ?? 'not run'}; ejabberd = ${theirs?.label ?? 'not run'}`),
    '',
    `Raw results: ${dir}`,
  ];
  await writeFile(join(dir, 'muc.md'), `${lines.join('\n')}\n`);
  await writeFile(
    join(dir, 'muc.json'),
    JSON.stringify(
      {
        date,
        started,
        machine,
        kit: kit.dir,
        reps: REPS,
        targets: opts.targets,
        workers,
        modulesAdded: added,
        occupants: OCCUPANTS,
        rates,
        rooms: { count: ROOMS, ours: roomsOurs, ejabberd: roomsTheirs },
        fanout: fanouts,
        rows: rows.map((r) => ({ ...r, ratio: ratio(r) })),
      },
      null,
      1,
    ),
  );
  console.log(lines.join('\n'));
}

main().catch((err: Error) => {
  console.error(`[muc] ${err.message}`);
  process.exit(1);
});
