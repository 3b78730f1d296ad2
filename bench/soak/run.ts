/**
 * Soak test: the real server, started as operators start it (`node cli/dist/servicectl.js --config FILE
 * foreground`), under a steady mixed load for a long time, its resources sampled all along; fails when one of
 * them keeps growing.
 *
 *   node --import tsx bench/soak/run.ts [--minutes 30] [--workers auto|N] [--sample 10] [--keep] [load options, see --help]
 *
 * Load, steady for the whole run (bench/c2s's raw XMPP client, SCRAM-SHA-256, STARTTLS unless --plain):
 *   - churn: fresh logins at a fixed rate; each session stays 1–4 s, sends one message to a chat client, then
 *     closes its stream (or, one in five, drops the TCP connection);
 *   - chat: pairs of clients online all along send each other `type='chat'` messages to full JIDs;
 *   - roster: add_rosteritem then, later, delete_rosteritem on both sides (HTTP API), a bounded set outstanding;
 *   - HTTP API: status, connected_users_number, registered_users, get_roster, get_offline_count, stats… (one
 *     call in five with HTTP Basic as admin);
 *   - slow clients: behind a proxy that reads what the server sends 1 s in every 7, fed 32 KiB headline
 *     messages (send_message) at 2/s each; stalled clients: never read, fed 128 KiB 8 times a second until the
 *     server cuts them (its 8 MiB write limit, about every 15 s), then reconnect;
 *   - silent clients: log in and send nothing; mod_ping (send_pings, here) cuts them, they reconnect.
 *
 * Every --sample seconds, for every process of the server (the primary and, with --workers, its children):
 * RSS, open file descriptors and CPU from /proc; V8 heap and event-loop delay from a probe preloaded through
 * NODE_OPTIONS (bench/soak/probe.mjs); the SQLite file and its -wal on disk, and the bytes in use.
 *
 * At the end: warm-up = the first 20 % or 3 minutes, whichever is less; over the rest, a least-squares slope
 * per metric (RSS and heap on their lower envelope over the trailing minute; the event-loop delay without the
 * samples taken while other work kept the machine busy) against the tolerances of rules(), and a verdict.
 * Writes bench/results/soak-<time>/ (summary.md, samples.json, samples.csv, plot.svg and plot.png when Chromium
 * is there, the server's log, the probe files). See bench/README.md.
 */
import { readFileSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createSecureContext, type SecureContext } from 'node:tls';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { HOST, REPO, RESULTS_DIR, basicAuth, callApi, freePort, machineInfo, percentile, requireBuild, round1, round2, sleep, startServer, tail, waitQuiet, writeConfig, type LogLevel, type ServerProcess } from '../api/lib.js';
import { BenchClient, now } from '../c2s/client.js';
import { TLS_CA, c2sConfig, cpuMark, openFds } from '../c2s/lib.js';
import { DbObserver, ProbeReader, ThrottleProxy, cmdline, describeFds, judge, lowerEnvelope, mean, procStats, processTree, svgPlot, type PlotSeries, type ThrottleLink, type TrendRule, type TrendVerdict } from './lib.js';

const { values: opts } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    workers: { type: 'string' },
    sample: { type: 'string', default: '10' },
    warmup: { type: 'string' },
    'login-rate': { type: 'string', default: '5' },
    'churn-accounts': { type: 'string', default: '100' },
    pairs: { type: 'string', default: '25' },
    'msg-rate': { type: 'string', default: '100' },
    'api-rate': { type: 'string', default: '10' },
    'roster-rate': { type: 'string', default: '2' },
    'roster-outstanding': { type: 'string', default: '40' },
    slow: { type: 'string', default: '3' },
    stalled: { type: 'string', default: '1' },
    silent: { type: 'string', default: '5' },
    'ping-interval': { type: 'string', default: '30' },
    'ping-ack-timeout': { type: 'string', default: '10' },
    plain: { type: 'boolean', default: false },
    loglevel: { type: 'string', default: 'warning' },
    keep: { type: 'boolean', default: false },
    'inject-leak': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (opts.help) {
  console.log(`usage: node --import tsx bench/soak/run.ts [options]

  --minutes M            length of the loaded run (30)
  --workers auto|N       written into the configuration as the top-level \`workers\` option (left out when not given)
  --sample S             seconds between samples (10)
  --warmup S             seconds of warm-up left out of the trends (default: 20 % of the run, at most 180)
  --login-rate R         churn logins per second (5)
  --churn-accounts N     accounts the churn logins take turns on (100)
  --pairs K              chat pairs online all along (25)
  --msg-rate R           chat messages per second, all pairs together (100)
  --api-rate R           HTTP API calls per second, roster and feeds not counted (10)
  --roster-rate R        roster changes per second (2), at most --roster-outstanding (40) items added and not yet removed
  --slow N               slow readers (3); --stalled N: clients that never read (1); --silent N: silent clients (5)
  --ping-interval S      mod_ping's ping_interval (30) and --ping-ack-timeout S its ping_ack_timeout (10)
  --plain                no STARTTLS (default: STARTTLS required, as in production)
  --loglevel L           the server's log level (warning)
  --keep                 keep the temporary directory (configuration, database, logs)
  --inject-leak K        a self-check of this script: the probe keeps K KiB of heap a second in every server
                         process, and the run should fail`);
  process.exit(0);
}

const num = (name: string, value: string | undefined, min: number): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) {
    console.error(`--${name}: expected a number ≥ ${min}, got ${JSON.stringify(value)}`);
    process.exit(64);
  }
  return n;
};
const MINUTES = num('minutes', opts.minutes, 0.5);
const SAMPLE_S = num('sample', opts.sample, 1);
const DURATION_S = MINUTES * 60;
const WARMUP_S = opts.warmup !== undefined ? num('warmup', opts.warmup, 0) : Math.min(0.2 * DURATION_S, 180);
const LOGIN_RATE = num('login-rate', opts['login-rate'], 0);
const CHURN_ACCOUNTS = num('churn-accounts', opts['churn-accounts'], 1);
const PAIRS = num('pairs', opts.pairs, 1);
const MSG_RATE = num('msg-rate', opts['msg-rate'], 0);
const API_RATE = num('api-rate', opts['api-rate'], 0);
const ROSTER_RATE = num('roster-rate', opts['roster-rate'], 0);
const ROSTER_OUTSTANDING = num('roster-outstanding', opts['roster-outstanding'], 1);
const SLOW = num('slow', opts.slow, 0);
const STALLED = num('stalled', opts.stalled, 0);
const SILENT = num('silent', opts.silent, 0);
const PING_INTERVAL = num('ping-interval', opts['ping-interval'], 1);
const PING_ACK_TIMEOUT = num('ping-ack-timeout', opts['ping-ack-timeout'], 1);
const TLS = !opts.plain;
const LOGLEVEL = opts.loglevel as LogLevel;
const INJECT_LEAK_KIB = opts['inject-leak'] !== undefined ? num('inject-leak', opts['inject-leak'], 0) : 0;
let WORKERS: number | 'auto' | undefined;
if (opts.workers !== undefined) WORKERS = opts.workers === 'auto' ? 'auto' : num('workers', opts.workers, 1);
if (SLOW + STALLED > 200) {
  console.error('--slow + --stalled: at most 200 (one source address each)');
  process.exit(64);
}

/**
 * What slow and stalled clients are sent, as headline messages (never stored offline when the client is gone).
 * A slow client gets 64 KiB/s and reads 1 s in every SLOW_CYCLE_S (7, prime to the usual sample periods): it
 * keeps up on average, but the ~400 KiB of each pause outgrow the kernel's buffers and wait in the server.
 * A stalled client gets 1 MiB/s and never reads: the server holds up to 8 MiB for it (its limit) and cuts it
 * within ~15 s; fast cycles keep that sawtooth in the heap short next to the trend window.
 */
const SLOW_BODY = 'x'.repeat(32 * 1024);
const SLOW_FEED_RATE = 2;
const STALLED_BODY = 'x'.repeat(128 * 1024);
const STALLED_FEED_RATE = 8;
const SLOW_CYCLE_S = 7;
/** Slow and stalled clients send a message to themselves this often, so that mod_ping leaves them alone. */
const KEEPALIVE_S = Math.max(1, Math.min(15, Math.floor(PING_INTERVAL / 2)));
/**
 * A stalled client learns that the server cut it only when it writes (the server's FIN waits behind the data
 * it never read; a write draws a reset): it writes this often.
 */
const STALLED_KEEPALIVE_S = 2;
/** Churn sessions that end by dropping the TCP connection instead of closing the stream. */
const ABORT_SHARE = 0.2;
const PASSWORD = 'soak-user-pass';
const ADMIN_PASSWORD = 'soak-admin-pass';
const ADMIN_AUTH = basicAuth(`admin@${HOST}`, ADMIN_PASSWORD);

/**
 * When a metric fails: its growth over the steady window is above max(relative × mean, floor) (lib.ts judge()).
 * Memory floors are per server process (each warms up on its own: JIT code, caches) plus 8 MiB per stalled
 * client: the server may hold that much for one at any moment (its write limit), in the V8 heap (the socket's
 * queue of strings) and so in RSS, a swing between two samples that is the designed load, not a trend.
 */
function rules(processes: number): TrendRule[] {
  const stalledMiB = 8 * STALLED;
  return [
    { key: 'rssMiB', label: 'RSS, all processes (lowest of the trailing minute)', unit: 'MiB', relative: 0.1, floor: 16 * processes + stalledMiB, envelopeS: 60 },
    { key: 'heapMiB', label: 'V8 heap live (used after the last full GC), all processes (lowest of the trailing minute)', unit: 'MiB', relative: 0.1, floor: 4 * processes + stalledMiB, envelopeS: 60 },
    { key: 'fds', label: 'open file descriptors, all processes', unit: 'fds', relative: 0.1, floor: 20 },
    { key: 'loopP99Ms', label: 'event-loop delay p99, worst process', unit: 'ms', relative: 0.5, floor: 10, quietOnly: true },
    { key: 'dbUsedKiB', label: 'database in use (pages − free pages) outside the message archive', unit: 'KiB', relative: 0.1, floor: 256 },
  ];
}
/**
 * Samples during which everything else on the machine used more than this (% of one core) are left out of the
 * event-loop delay's trend: on a small machine a neighbour's burst (a build, a test suite) is what it would measure.
 */
const BUSY_OTHER_PCT = 50;
/** Error shares above which the load itself is judged broken (the run fails: the figures would not mean much). */
const MAX_ERROR_SHARE = 0.01;
const MAX_LOST_SHARE = 0.001;

const log = (message: string) => process.stderr.write(`[bench soak] ${message}\n`);

// ---------------------------------------------------------------------------------------------------------
// Bookkeeping

class Errors {
  readonly counts = new Map<string, number>();
  add(kind: string, err: unknown): void {
    const text = err instanceof Error ? err.message : String(err);
    const key = `${kind}: ${text.replace(/\s+/g, ' ').replace(/\d+/g, 'N').slice(0, 160)}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
}

const errors = new Errors();

/** Cumulative counters; samples record their differences. */
const counters = {
  logins: 0,
  loginFailures: 0,
  logouts: 0,
  aborts: 0,
  churnSent: 0,
  churnReceived: 0,
  chatSent: 0,
  chatReceived: 0,
  chatSkipped: 0,
  apiCalls: 0,
  apiErrors: 0,
  rosterAdds: 0,
  rosterDeletes: 0,
  rosterErrors: 0,
  feedCalls: 0,
  feedErrors: 0,
  feedBytesRead: 0,
  slowCuts: 0,
  stalledCuts: 0,
  silentKicks: 0,
  chatterDrops: 0,
  /** Ticks where a loop was at its in-flight limit and skipped work: the generator (or the server) fell behind. */
  behind: 0,
};
type Counters = typeof counters;

class Samples {
  values: number[] = [];
  push(v: number): void {
    this.values.push(v);
  }
  take(): Float64Array {
    const out = Float64Array.from(this.values).sort();
    this.values = [];
    return out;
  }
}
const chatLatency = new Samples();
const loginLatency = new Samples();
const allChatLatency: number[] = [];
const allLoginLatency: number[] = [];
const silentLifetimes: number[] = [];
const stalledLifetimes: number[] = [];

let stopping = false;
const timers: NodeJS.Timeout[] = [];
const every = (ms: number, fn: () => void) => timers.push(setInterval(fn, ms));
const rand = (a: number, b: number) => a + Math.random() * (b - a);
const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)]!;

/** Calls `fn` `rate` times a second on average, in ticks of `tickMs`; at most `maxInFlight` unfinished at once. */
function paced(rate: number, maxInFlight: number, fn: () => Promise<void>, tickMs = 50): { inFlight: () => number } {
  let credit = 0;
  let inFlight = 0;
  let last = performance.now();
  if (rate > 0)
    every(tickMs, () => {
      const t = performance.now();
      credit = Math.min(credit + (rate * (t - last)) / 1000, Math.max(1, rate));
      last = t;
      while (credit >= 1 && !stopping) {
        credit -= 1;
        if (inFlight >= maxInFlight) {
          counters.behind++;
          continue;
        }
        inFlight++;
        fn()
          .catch((err) => errors.add('load generator', err))
          .finally(() => inFlight--);
      }
    });
  return { inFlight: () => inFlight };
}

// ---------------------------------------------------------------------------------------------------------
// The XMPP side

let c2sPort = 0;
let secureContext: SecureContext | undefined;

function newClient(user: string, resource: string, extra: { port?: number; localAddress?: string } = {}): BenchClient {
  return new BenchClient({
    port: extra.port ?? c2sPort,
    localAddress: extra.localAddress,
    domain: HOST,
    user,
    password: PASSWORD,
    resource,
    tls: secureContext ? { secureContext } : undefined,
    timeoutMs: 30_000,
  });
}

interface LongLived {
  user: string;
  resource: string;
  client?: BenchClient;
  online: boolean;
  since: number;
  /** A reconnection is under way. */
  connecting: boolean;
}

const chatters: Array<LongLived & { partner: number }> = [];
const silents: LongLived[] = [];
const throttled: Array<LongLived & { kind: 'slow' | 'stalled'; address: string; link?: ThrottleLink }> = [];
let proxy: ThrottleProxy | undefined;

async function connectChatter(i: number): Promise<void> {
  const c = chatters[i]!;
  c.connecting = true;
  try {
    const client = newClient(c.user, c.resource);
    await client.login();
    client.onMessage((body, at) => {
      if (body === 'churn') counters.churnReceived++;
      else {
        const sentAt = Number(body);
        if (Number.isFinite(sentAt)) {
          counters.chatReceived++;
          chatLatency.push(at - sentAt);
        }
      }
    });
    c.client = client;
    c.online = true;
    c.since = Date.now();
  } finally {
    c.connecting = false;
  }
}

async function connectSilent(s: LongLived): Promise<void> {
  s.connecting = true;
  try {
    const client = newClient(s.user, s.resource);
    await client.login();
    s.client = client;
    s.online = true;
    s.since = Date.now();
  } finally {
    s.connecting = false;
  }
}

async function connectThrottled(s: (typeof throttled)[number]): Promise<void> {
  s.connecting = true;
  try {
    const client = newClient(s.user, s.resource, { port: proxy!.port, localAddress: s.address });
    await client.login();
    client.onMessage((body) => {
      counters.feedBytesRead += body.length;
    });
    s.link = proxy!.link(s.address);
    if (!s.link) {
      client.destroy();
      throw new Error(`no proxy link for ${s.address}`);
    }
    s.client = client;
    if (s.kind === 'stalled') s.link.pause();
    s.online = true;
    s.since = Date.now();
  } finally {
    s.connecting = false;
  }
}

/** Every second: notices long-lived clients the server (or the network) closed, and reconnects them. */
function watchLongLived(): void {
  every(1000, () => {
    if (stopping) return;
    for (const [i, c] of chatters.entries()) {
      if (c.online && c.client?.closed) {
        c.online = false;
        counters.chatterDrops++;
        errors.add('chat client disconnected', `${c.user}/${c.resource}`);
      }
      if (!c.online && !c.connecting) void connectChatter(i).catch((err) => errors.add('chat client login', err));
    }
    for (const s of silents) {
      if (s.online && s.client?.closed) {
        s.online = false;
        counters.silentKicks++;
        silentLifetimes.push((Date.now() - s.since) / 1000);
      }
      if (!s.online && !s.connecting) void connectSilent(s).catch((err) => errors.add('silent client login', err));
    }
    for (const s of throttled) {
      if (s.online && s.client?.closed) {
        s.online = false;
        if (s.kind === 'stalled') {
          counters.stalledCuts++;
          stalledLifetimes.push((Date.now() - s.since) / 1000);
        } else {
          counters.slowCuts++;
          errors.add('slow client cut', `${s.user} after ${Math.round((Date.now() - s.since) / 1000)} s (${s.link?.upError ?? 'closed'})`);
        }
      }
      if (!s.online && !s.connecting) void connectThrottled(s).catch((err) => errors.add(`${s.kind} client login`, err));
    }
  });
}

/** Slow readers read for 1 s in every SLOW_CYCLE_S; slow and stalled clients send themselves a keepalive. */
function driveThrottled(): void {
  let tick = 0;
  every(1000, () => {
    tick++;
    for (const s of throttled) {
      if (!s.online || !s.link) continue;
      if (s.kind === 'slow') {
        if (tick % SLOW_CYCLE_S === 0) s.link.resume();
        else if (!s.link.paused) s.link.pause();
      }
      if (tick % (s.kind === 'stalled' ? STALLED_KEEPALIVE_S : KEEPALIVE_S) === 0 && s.client && !s.client.closed) s.client.send(s.client.jid, 'keepalive');
    }
  });
}

/** Chat: each chat client sends to its partner's full JID, round robin, MSG_RATE a second in all. */
function driveChat(): void {
  let credit = 0;
  let next = 0;
  let last = performance.now();
  if (MSG_RATE <= 0) return;
  every(20, () => {
    const t = performance.now();
    credit = Math.min(credit + (MSG_RATE * (t - last)) / 1000, MSG_RATE);
    last = t;
    while (credit >= 1 && !stopping) {
      credit -= 1;
      const from = chatters[next]!;
      const to = chatters[from.partner]!;
      next = (next + 1) % chatters.length;
      if (!from.online || !to.online || !from.client || !to.client || from.client.closed || to.client.closed) {
        counters.chatSkipped++;
        continue;
      }
      from.client.send(to.client.jid, now().toFixed(3));
      counters.chatSent++;
    }
  });
}

/** Churn: LOGIN_RATE fresh logins a second, each on an account not in use, held 1–4 s. */
function driveChurn(accounts: string[]): ReturnType<typeof paced> {
  const free = [...accounts];
  let seq = 0;
  return paced(LOGIN_RATE, Math.max(20, Math.ceil(LOGIN_RATE * 15)), async () => {
    const user = free.shift();
    if (!user) {
      counters.behind++;
      return;
    }
    const client = newClient(user, `churn${++seq}`);
    try {
      try {
        const times = await client.login();
        counters.logins++;
        loginLatency.push(times.totalMs);
      } catch (err) {
        counters.loginFailures++;
        errors.add('churn login', err);
        client.destroy();
        return;
      }
      await sleep(rand(1000, 4000));
      const online = chatters.filter((c) => c.online && c.client && !c.client.closed);
      if (online.length && !client.closed) {
        client.send(pick(online).client!.jid, 'churn');
        counters.churnSent++;
      }
      if (Math.random() < ABORT_SHARE) {
        client.destroy();
        counters.aborts++;
      } else {
        await client.close(10_000);
        counters.logouts++;
      }
    } finally {
      free.push(user);
    }
  });
}

// ---------------------------------------------------------------------------------------------------------
// The HTTP side

let httpPort = 0;

/** An HTTP API call that gives up after `timeoutMs` (the server may be stuck: the run must go on). */
async function api(command: string, args: Record<string, unknown>, auth?: string, timeoutMs = 30_000): Promise<{ status: number; body: any }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${command}: no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([callApi(httpPort, command, args, auth), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function driveApi(accounts: { churn: string[]; chat: string[] }): ReturnType<typeof paced> {
  const mix: Array<[string, () => Record<string, unknown>]> = [
    ['status', () => ({})],
    ['connected_users_number', () => ({})],
    ['registered_users', () => ({ host: HOST })],
    ['get_roster', () => ({ user: pick(accounts.churn), host: HOST })],
    ['get_offline_count', () => ({ user: pick(accounts.churn), host: HOST })],
    ['user_resources', () => ({ user: pick(accounts.chat), host: HOST })],
    ['stats', () => ({ name: 'onlineusers' })],
    ['stats_host', () => ({ name: 'registeredusers', host: HOST })],
    ['num_resources', () => ({ user: pick(accounts.chat), host: HOST })],
    ['get_roster', () => ({ user: pick(accounts.churn), host: HOST })],
  ];
  let n = 0;
  return paced(API_RATE, 20, async () => {
    const [command, args] = mix[n % mix.length]!;
    const auth = n % 5 === 4 ? ADMIN_AUTH : undefined;
    n++;
    try {
      const res = await api(command, args(), auth);
      counters.apiCalls++;
      if (res.status !== 200) {
        counters.apiErrors++;
        errors.add(`api ${command}`, `${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      }
    } catch (err) {
      counters.apiCalls++;
      counters.apiErrors++;
      errors.add(`api ${command}`, err);
    }
  });
}

/** Roster items added and not yet removed, oldest first. */
const rosterOutstanding: Array<[string, string]> = [];

async function rosterDelete(a: string, b: string): Promise<void> {
  // The owner's item goes; the contact's mirrored item moves to subscription none and stays: remove it too.
  for (const [owner, contact, must] of [[a, b, true], [b, a, false]] as const) {
    const res = await api('delete_rosteritem', { localuser: owner, localhost: HOST, user: contact, host: HOST });
    if (res.status === 200) counters.rosterDeletes++;
    else if (must || res.status !== 404) {
      counters.rosterErrors++;
      errors.add('roster delete', `${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
  }
}

function driveRoster(accounts: string[]): ReturnType<typeof paced> {
  const busy = new Set<string>();
  const key = (a: string, b: string) => (a < b ? `${a} ${b}` : `${b} ${a}`);
  return paced(ROSTER_RATE, 10, async () => {
    try {
      if (rosterOutstanding.length >= ROSTER_OUTSTANDING) {
        const [a, b] = rosterOutstanding.shift()!;
        busy.add(key(a, b));
        try {
          await rosterDelete(a, b);
        } finally {
          busy.delete(key(a, b));
        }
        return;
      }
      let a = pick(accounts);
      let b = pick(accounts);
      for (let tries = 0; (a === b || busy.has(key(a, b))) && tries < 20; tries++) {
        a = pick(accounts);
        b = pick(accounts);
      }
      if (a === b || busy.has(key(a, b))) return;
      busy.add(key(a, b));
      const res = await api('add_rosteritem', { localuser: a, localhost: HOST, user: b, host: HOST, nick: `nick ${b}`, groups: ['soak'], subs: 'both' });
      if (res.status === 200) {
        counters.rosterAdds++;
        rosterOutstanding.push([a, b]);
      } else {
        busy.delete(key(a, b));
        counters.rosterErrors++;
        errors.add('roster add', `${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      }
    } catch (err) {
      counters.rosterErrors++;
      errors.add('roster', err);
    }
  });
}

/** Feeds slow and stalled clients headline messages through send_message. */
function driveFeeds(): void {
  for (const s of throttled) {
    const rate = s.kind === 'slow' ? SLOW_FEED_RATE : STALLED_FEED_RATE;
    const body = s.kind === 'slow' ? SLOW_BODY : STALLED_BODY;
    paced(rate, 8, async () => {
      if (!s.online || !s.client || s.client.closed) return;
      try {
        const res = await api('send_message', { type: 'headline', from: `feeder@${HOST}`, to: s.client.jid, subject: '', body }, ADMIN_AUTH);
        counters.feedCalls++;
        if (res.status !== 200) {
          counters.feedErrors++;
          errors.add('feed', `${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        }
      } catch (err) {
        counters.feedCalls++;
        counters.feedErrors++;
        errors.add('feed', err);
      }
    });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Samples

interface ProcessSample {
  pid: number;
  role: string;
  rssMiB: number;
  /** heapUsed right after the last full collection (the lowest reading of the interval before the first). */
  heapLiveMiB: number;
  heapMiB: number;
  heapMinMiB: number;
  majorGcs: number;
  gcMs: number;
  fds: number;
  cpuPct: number;
  loopP99Ms: number;
  loopMaxMs: number;
  /** Seconds since the probe's last line (NaN without a probe). */
  probeAgeS: number;
}

interface Sample {
  /** Seconds since the load started. */
  t: number;
  at: string;
  processes: ProcessSample[];
  rssMiB: number;
  /** Sum over processes of the heap used right after their last full collection. */
  heapMiB: number;
  /** Sum over processes of the lowest heapUsed read over the interval (every second). */
  heapMinMiB: number;
  /** Sum over processes of heapUsed at the probe's last reading. */
  heapNowMiB: number;
  fds: number;
  loopP99Ms: number;
  loopMaxMs: number;
  cpuPct: number;
  dbKiB: number;
  dbFileKiB: number;
  walKiB: number;
  /** Pages in use outside the message archive (mod_mam keeps every message on purpose). */
  dbUsedKiB: number;
  archiveKiB: number;
  sessions: number;
  /** Differences of the counters over the interval. */
  load: Partial<Counters>;
  chatP99Ms: number;
  loginP99Ms: number;
  generatorLoopP99Ms: number;
  generatorCpuPct: number;
  /** CPU used by everything else on the machine, % of one core: well above zero, the run shared the machine. */
  otherCpuPct: number;
}

const MiB = 1024 * 1024;

class Sampler {
  readonly samples: Sample[] = [];
  readonly #probe: ProbeReader;
  #lastCpu = new Map<number, { cpuS: number; at: number }>();
  #lastCounters: Counters = { ...counters };
  #generatorDelay = monitorEventLoopDelay({ resolution: 10 });
  #generatorCpu = { usage: process.cpuUsage(), at: performance.now() };
  #machine = cpuMark(process.pid, []).machine;
  readonly pidsSeen = new Map<number, { role: string; cmdline: string; firstT: number; lastT: number }>();

  constructor(
    readonly server: ServerProcess,
    probeDir: string,
    readonly db: DbObserver,
    readonly startedAt: number,
  ) {
    this.#probe = new ProbeReader(probeDir);
    this.#generatorDelay.enable();
  }

  get probe(): ProbeReader {
    return this.#probe;
  }

  /** Starts the CPU accounting of the server's processes (the first sample's CPU is over the interval since). */
  prime(): void {
    const at = performance.now();
    for (const pid of processTree(this.server.pid)) this.#lastCpu.set(pid, { cpuS: procStats(pid).cpuS, at });
    this.#lastCounters = { ...counters };
    this.#generatorDelay.reset();
    this.#generatorCpu = { usage: process.cpuUsage(), at };
    this.#machine = cpuMark(process.pid, []).machine;
  }

  async take(): Promise<Sample> {
    const t = round1((Date.now() - this.startedAt) / 1000);
    this.#probe.poll();
    const at = performance.now();
    const pids = processTree(this.server.pid);
    const processes: ProcessSample[] = pids.map((pid) => {
      const stats = procStats(pid);
      const line = this.#probe.latest.get(pid);
      const prev = this.#lastCpu.get(pid);
      this.#lastCpu.set(pid, { cpuS: stats.cpuS, at });
      const cpuPct = prev ? ((stats.cpuS - prev.cpuS) / ((at - prev.at) / 1000)) * 100 : NaN;
      const role = pid === this.server.pid ? 'primary' : (line?.role ?? 'child');
      const seen = this.pidsSeen.get(pid);
      if (seen) {
        seen.lastT = t;
        if (seen.role === 'child' && line) seen.role = line.role;
      }
      else this.pidsSeen.set(pid, { role, cmdline: cmdline(pid), firstT: t, lastT: t });
      return {
        pid,
        role,
        rssMiB: round1(stats.rssMiB),
        heapLiveMiB: line ? round1((line.heapAfterMajorGc ?? line.heapUsedMin) / MiB) : NaN,
        heapMiB: line ? round1(line.heapUsed / MiB) : NaN,
        heapMinMiB: line ? round1(line.heapUsedMin / MiB) : NaN,
        majorGcs: line ? line.gc.major : NaN,
        gcMs: line ? line.gc.ms : NaN,
        fds: stats.fds,
        cpuPct: round1(cpuPct),
        loopP99Ms: line ? line.loopDelayMs.p99 : NaN,
        loopMaxMs: line ? line.loopDelayMs.max : NaN,
        probeAgeS: line ? round1((Date.now() - line.t) / 1000) : NaN,
      };
    });
    const sum = (f: (p: ProcessSample) => number) => processes.reduce((a, p) => a + f(p), 0);
    const max = (f: (p: ProcessSample) => number) => Math.max(...processes.map(f).filter(Number.isFinite));
    const { dbBytes, walBytes } = this.db.onDisk();
    let dbUsed = NaN;
    let archive = NaN;
    try {
      archive = this.db.archiveBytes();
      dbUsed = this.db.usedBytes() - archive;
    } catch (err) {
      errors.add('sampler: database', err);
    }
    let sessions = NaN;
    try {
      const res = await api('connected_users_number', {}, undefined, 5000);
      if (res.status === 200) sessions = Number(res.body);
    } catch (err) {
      errors.add('sampler: connected_users_number', err);
    }
    const load: Partial<Counters> = {};
    for (const k of Object.keys(counters) as Array<keyof Counters>) load[k] = counters[k] - this.#lastCounters[k];
    this.#lastCounters = { ...counters };
    const chat = chatLatency.take();
    const logins = loginLatency.take();
    allChatLatency.push(...chat);
    allLoginLatency.push(...logins);
    const cpuNow = process.cpuUsage();
    const generatorCpuPct = ((cpuNow.user + cpuNow.system - this.#generatorCpu.usage.user - this.#generatorCpu.usage.system) / 1e3 / (at - this.#generatorCpu.at)) * 100;
    this.#generatorCpu = { usage: cpuNow, at };
    const machine = cpuMark(process.pid, []).machine;
    const machinePct = ((machine.busy - this.#machine.busy) / Math.max(1, machine.total - this.#machine.total)) * 100 * cpus().length;
    this.#machine = machine;
    const serverCpuPct = sum((p) => (Number.isFinite(p.cpuPct) ? p.cpuPct : 0));
    const sample: Sample = {
      t,
      at: new Date().toISOString(),
      processes,
      rssMiB: round1(sum((p) => p.rssMiB)),
      heapMiB: round1(sum((p) => p.heapLiveMiB)),
      heapMinMiB: round1(sum((p) => p.heapMinMiB)),
      heapNowMiB: round1(sum((p) => p.heapMiB)),
      fds: sum((p) => p.fds),
      loopP99Ms: round2(max((p) => p.loopP99Ms)),
      loopMaxMs: round2(max((p) => p.loopMaxMs)),
      cpuPct: round1(serverCpuPct),
      dbKiB: round1((dbBytes + walBytes) / 1024),
      dbFileKiB: round1(dbBytes / 1024),
      walKiB: round1(walBytes / 1024),
      dbUsedKiB: round1(dbUsed / 1024),
      archiveKiB: round1(archive / 1024),
      sessions,
      load,
      chatP99Ms: chat.length ? round2(percentile(chat, 99)) : NaN,
      loginP99Ms: logins.length ? round2(percentile(logins, 99)) : NaN,
      generatorLoopP99Ms: round2(Math.max(0, this.#generatorDelay.percentile(99) / 1e6 - 10)),
      generatorCpuPct: round1(generatorCpuPct),
      otherCpuPct: round1(Math.max(0, machinePct - serverCpuPct - generatorCpuPct)),
    };
    this.#generatorDelay.reset();
    this.samples.push(sample);
    return sample;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Output

const fmtT = (s: number) => `${Math.floor(s / 60)}:${String(Math.round(s % 60)).padStart(2, '0')}`;
const cell = (v: number, digits = 1) => (Number.isFinite(v) ? v.toFixed(digits) : '—');

function sampleTable(rows: Sample[], warmupS: number): string {
  const head = '| time | RSS MiB | heap MiB | fds | loop delay p99 ms | db KiB | db in use KiB | CPU % | sessions | msgs/s | logins/min |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|';
  const lines = rows.map((s) => {
    const dt = Math.max(1e-9, SAMPLE_S);
    return `| ${fmtT(s.t)}${s.t < warmupS ? ' (warm-up)' : ''} | ${cell(s.rssMiB)} | ${cell(s.heapMiB)} | ${s.fds} | ${cell(s.loopP99Ms, 2)} | ${cell(s.dbKiB, 0)} | ${cell(s.dbUsedKiB, 0)} | ${cell(s.cpuPct, 0)} | ${Number.isFinite(s.sessions) ? s.sessions : '—'} | ${cell((s.load.chatReceived ?? 0) / dt, 0)} | ${cell(((s.load.logins ?? 0) / dt) * 60, 0)} |`;
  });
  return [head, ...lines].join('\n');
}

/** The sample nearest each whole minute (and the first one). */
function perMinute(samples: Sample[]): Sample[] {
  if (!samples.length) return [];
  const out = [samples[0]!];
  const last = samples[samples.length - 1]!.t;
  for (let m = 1; m * 60 <= last + SAMPLE_S / 2; m++) {
    const target = m * 60;
    const best = samples.reduce((a, b) => (Math.abs(b.t - target) < Math.abs(a.t - target) ? b : a));
    if (!out.includes(best)) out.push(best);
  }
  if (!out.includes(samples[samples.length - 1]!)) out.push(samples[samples.length - 1]!);
  return out;
}

function csv(samples: Sample[]): string {
  const cols = ['t', 'rssMiB', 'heapMiB', 'heapMinMiB', 'heapNowMiB', 'fds', 'loopP99Ms', 'loopMaxMs', 'cpuPct', 'dbKiB', 'dbFileKiB', 'walKiB', 'dbUsedKiB', 'archiveKiB', 'sessions', 'chatP99Ms', 'loginP99Ms', 'generatorLoopP99Ms', 'generatorCpuPct', 'otherCpuPct'] as const;
  const loadCols = Object.keys(counters) as Array<keyof Counters>;
  const lines = [[...cols, ...loadCols.map((k) => `load.${k}`), 'processes'].join(',')];
  for (const s of samples) lines.push([...cols.map((c) => s[c]), ...loadCols.map((k) => s.load[k] ?? ''), s.processes.length].join(','));
  return `${lines.join('\n')}\n`;
}

async function renderPng(svgFile: string, pngFile: string): Promise<string | undefined> {
  const chromium = '/usr/bin/chromium';
  try {
    readFileSync(chromium);
  } catch {
    return 'no Chromium at /usr/bin/chromium';
  }
  try {
    const { chromium: launcher } = await import('playwright-core');
    const browser = await launcher.launch({ executablePath: chromium, headless: true });
    try {
      const page = await browser.newPage();
      const svg = readFileSync(svgFile, 'utf8');
      const [, w, h] = /width="(\d+)" height="(\d+)"/.exec(svg) ?? [];
      await page.setViewportSize({ width: Number(w) || 900, height: Number(h) || 900 });
      await page.setContent(`<html><body style="margin:0">${svg}</body></html>`);
      await page.screenshot({ path: pngFile, fullPage: true });
    } finally {
      await browser.close();
    }
    return undefined;
  } catch (err) {
    return `PNG not rendered: ${(err as Error).message.split('\n')[0]}`;
  }
}

/** Lines of the server's log at warning or above (pino levels ≥ 40), and anything that is not JSON. */
function scanServerLog(file: string): { byMessage: Array<{ level: string; msg: string; count: number }>; total: number; other: string[] } {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { byMessage: [], total: 0, other: [] };
  }
  const counts = new Map<string, { level: string; msg: string; count: number }>();
  const other: string[] = [];
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let entry: { level?: number | string; msg?: string; err?: { message?: string } } | undefined;
    try {
      entry = JSON.parse(line);
    } catch {
      if (other.length < 20) other.push(line.slice(0, 300));
      continue;
    }
    const level = typeof entry!.level === 'number' ? (entry!.level >= 60 ? 'fatal' : entry!.level >= 50 ? 'error' : entry!.level >= 40 ? 'warning' : 'info') : String(entry!.level ?? '?');
    if (level === 'info' || level === 'debug' || level === 'notice') continue;
    total++;
    const msg = `${entry!.msg ?? ''}${entry!.err?.message ? ` — ${entry!.err.message}` : ''}`.replace(/\d+/g, 'N').slice(0, 200);
    const k = `${level} ${msg}`;
    const c = counts.get(k) ?? { level, msg, count: 0 };
    c.count++;
    counts.set(k, c);
  }
  return { byMessage: [...counts.values()].sort((a, b) => b.count - a.count), total, other };
}

// ---------------------------------------------------------------------------------------------------------

async function registerAll(users: string[]): Promise<void> {
  const queue = [...users];
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let user = queue.shift(); user; user = queue.shift()) {
        const res = await api('register', { user, host: HOST, password: user === 'admin' ? ADMIN_PASSWORD : PASSWORD });
        if (res.status !== 200) failures.push(`${user}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }),
  );
  if (failures.length) throw new Error(`register failed for ${failures.length} accounts, first: ${failures[0]}`);
}

async function main(): Promise<number> {
  requireBuild();
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const outDir = join(RESULTS_DIR, `soak-${stamp}`);
  const tmp = await mkdtemp(join(tmpdir(), 'bench-soak-'));
  const dataDir = join(tmp, 'data');
  const probeDir = join(tmp, 'probe');
  await mkdir(dataDir, { recursive: true });
  await mkdir(probeDir, { recursive: true });
  httpPort = await freePort();
  c2sPort = await freePort();
  if (TLS) secureContext = createSecureContext({ ca: readFileSync(TLS_CA) });

  // config.example.yml, adapted as the other benchmarks do (bench/api, bench/c2s): loopback HTTP API on a free
  // port, a c2s listener, SQLite in our data_dir, loglevel. Loopback may also register accounts and run the
  // commands the load uses without credentials; mod_ping pings silent clients.
  const config = c2sConfig({ httpPort, c2sPort, dataDir, loglevel: LOGLEVEL, mode: TLS ? 'tls' : 'plain', modules: 'example' });
  (config.api_permissions as Record<string, unknown>)['soak loopback'] = {
    who: { acl: 'loopback' },
    what: ['register', 'registered_users', 'get_roster', 'add_rosteritem', 'delete_rosteritem', 'get_offline_count', 'user_resources', 'num_resources', 'stats', 'stats_host'],
  };
  (config.modules as Record<string, unknown>).mod_ping = { send_pings: true, ping_interval: PING_INTERVAL, ping_ack_timeout: PING_ACK_TIMEOUT };
  if (WORKERS !== undefined) config.workers = WORKERS;
  const configFile = join(tmp, 'config.yml');
  await writeConfig(configFile, config);
  const logFile = join(tmp, 'server.log');

  log(`${MINUTES} min (warm-up ${Math.round(WARMUP_S)} s), a sample every ${SAMPLE_S} s, ${WORKERS === undefined ? 'no workers option' : `workers: ${WORKERS}`}, ${TLS ? 'STARTTLS' : 'no TLS'}; temporary directory ${tmp}`);
  if (INJECT_LEAK_KIB) log(`self-check: every server process leaks ${INJECT_LEAK_KIB} KiB of heap a second (--inject-leak)`);

  // The probe goes in through NODE_OPTIONS, which node:cluster's and child_process's forks inherit.
  const probeUrl = pathToFileURL(join(REPO, 'bench/soak/probe.mjs')).href;
  const savedEnv = {
    NODE_OPTIONS: process.env.NODE_OPTIONS,
    SOAK_PROBE_DIR: process.env.SOAK_PROBE_DIR,
    SOAK_PROBE_INTERVAL_MS: process.env.SOAK_PROBE_INTERVAL_MS,
    SOAK_PROBE_LEAK_KIB_PER_S: process.env.SOAK_PROBE_LEAK_KIB_PER_S,
  };
  process.env.NODE_OPTIONS = [savedEnv.NODE_OPTIONS, `--import ${probeUrl}`].filter(Boolean).join(' ');
  process.env.SOAK_PROBE_DIR = probeDir;
  process.env.SOAK_PROBE_INTERVAL_MS = String(SAMPLE_S * 1000);
  if (INJECT_LEAK_KIB) process.env.SOAK_PROBE_LEAK_KIB_PER_S = String(INJECT_LEAK_KIB);
  else delete process.env.SOAK_PROBE_LEAK_KIB_PER_S;
  const starting = startServer({ configFile, port: httpPort, logFile, readyTimeoutMs: 60_000 }); // spawns synchronously
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  const server = await starting;
  let serverExit: { code: number | null; signal: NodeJS.Signals | null; t: number } | undefined;
  server.child.once('exit', (code, signal) => {
    serverExit = { code, signal, t: Date.now() };
    if (!stopping) log(`the server exited during the run (code ${code}, signal ${signal})`);
  });
  log(`server up (pid ${server.pid}), HTTP API on ${httpPort}, c2s on ${c2sPort}`);

  let db: DbObserver | undefined;
  const notes: string[] = [];
  try {
    // The process tree settles (workers fork after the primary answers, or not at all); every process must
    // have loaded the probe.
    let tree = processTree(server.pid);
    for (let i = 0, stable = 0; i < 100 && stable < 10; i++) {
      await sleep(200);
      const next = processTree(server.pid);
      stable = next.join() === tree.join() ? stable + 1 : 0;
      tree = next;
    }
    const probe = new ProbeReader(probeDir);
    probe.poll();
    const missing = tree.filter((pid) => !probe.started.has(pid));
    log(`server processes: ${tree.map((pid) => `${pid}${pid === server.pid ? ' (primary)' : ''}`).join(', ')}; probe loaded in ${tree.length - missing.length}/${tree.length}`);
    if (missing.length) notes.push(`The probe did not load in ${missing.map((p) => `${p} (${cmdline(p)})`).join(', ')}: NODE_OPTIONS did not reach them.`);

    // Accounts, through the API as an operator would.
    const chatUsers = Array.from({ length: 2 * PAIRS }, (_, i) => `chat${String(i).padStart(4, '0')}`);
    const churnUsers = Array.from({ length: CHURN_ACCOUNTS }, (_, i) => `churn${String(i).padStart(4, '0')}`);
    const slowUsers = Array.from({ length: SLOW }, (_, i) => `slow${i}`);
    const stalledUsers = Array.from({ length: STALLED }, (_, i) => `stalled${i}`);
    const silentUsers = Array.from({ length: SILENT }, (_, i) => `silent${i}`);
    const allUsers = ['admin', 'feeder', ...chatUsers, ...churnUsers, ...slowUsers, ...stalledUsers, ...silentUsers];
    let t0 = performance.now();
    await registerAll(allUsers);
    log(`registered ${allUsers.length} accounts through POST /api/register in ${Math.round(performance.now() - t0)} ms`);

    // On a machine as quiet as it gets within 2 minutes (before any client: idle ones would be pinged out).
    const background = await waitQuiet(25, 120, (pct) => log(`waiting for a quiet machine (other work uses ${pct} % of a core)…`));
    if (background >= 25) notes.push(`The machine was not quiet before the load (${background} % of a core busy).`);

    db = await DbObserver.open(join(dataDir, 'service.db'));
    const portNames: Record<number, string> = { [c2sPort]: 'c2s', [httpPort]: 'http' };
    const fdKinds = () => {
      const all: Record<string, number> = {};
      for (const pid of processTree(server.pid)) for (const [k, n] of Object.entries(describeFds(pid, portNames))) all[k] = (all[k] ?? 0) + n;
      return all;
    };
    const baseline = { fds: processTree(server.pid).reduce((a, pid) => a + openFds(pid), 0), fdKinds: fdKinds(), rows: db.rowCounts() };

    // Long-lived clients.
    proxy = new ThrottleProxy(c2sPort);
    await proxy.listen();
    chatUsers.forEach((user, i) => chatters.push({ user, resource: 'soak', online: false, since: 0, connecting: false, partner: i % 2 === 0 ? i + 1 : i - 1 }));
    silentUsers.forEach((user) => silents.push({ user, resource: 'silent', online: false, since: 0, connecting: false }));
    slowUsers.forEach((user, i) => throttled.push({ user, resource: 'slow', kind: 'slow', address: `127.0.0.${30 + i}`, online: false, since: 0, connecting: false }));
    stalledUsers.forEach((user, i) => throttled.push({ user, resource: 'stalled', kind: 'stalled', address: `127.0.0.${30 + SLOW + i}`, online: false, since: 0, connecting: false }));
    t0 = performance.now();
    await Promise.all([
      ...chatters.map((_, i) => connectChatter(i)),
      ...silents.map((s) => connectSilent(s)),
      ...throttled.map((s) => connectThrottled(s)),
    ]);
    log(`${chatters.length} chat, ${silents.length} silent, ${SLOW} slow and ${STALLED} stalled clients online in ${Math.round(performance.now() - t0)} ms`);

    // The load, from now on.
    const startedAt = Date.now();
    const sampler = new Sampler(server, probeDir, db, startedAt);
    sampler.prime();
    watchLongLived();
    driveThrottled();
    driveChat();
    const churn = driveChurn(churnUsers);
    const apiLoop = driveApi({ churn: churnUsers, chat: chatUsers });
    const roster = driveRoster(churnUsers);
    driveFeeds();

    let rowsAtSteady: Record<string, number> | undefined;
    for (let k = 1; k * SAMPLE_S <= DURATION_S + 1e-9; k++) {
      const due = startedAt + k * SAMPLE_S * 1000;
      await sleep(Math.max(0, due - Date.now()));
      if (serverExit) break;
      const s = await sampler.take();
      if (!rowsAtSteady && s.t >= WARMUP_S) rowsAtSteady = db.rowCounts();
      if (k === 1 || Math.floor(s.t / 60) !== Math.floor((s.t - SAMPLE_S) / 60) || k * SAMPLE_S + SAMPLE_S > DURATION_S + 1e-9) {
        log(
          `${fmtT(s.t)}  RSS ${cell(s.rssMiB)} MiB (${s.processes.length} proc)  heap ${cell(s.heapMiB)} MiB  fds ${s.fds}  loop p99 ${cell(s.loopP99Ms, 1)} ms  db ${cell(s.dbKiB, 0)} KiB (in use ${cell(s.dbUsedKiB, 0)})  CPU ${cell(s.cpuPct, 0)} %  sessions ${s.sessions}  ` +
            `logins ${counters.logins} (${counters.loginFailures} failed)  chat ${counters.chatReceived}/${counters.chatSent}  api ${counters.apiCalls} (${counters.apiErrors} err)  roster +${counters.rosterAdds}/−${counters.rosterDeletes}  cuts: stalled ${counters.stalledCuts} silent ${counters.silentKicks}`,
        );
      }
    }
    const loadSeconds = (Date.now() - startedAt) / 1000;

    // Wind down: stop new work, let what is under way finish, let the last messages arrive.
    stopping = true;
    for (const t of timers) clearInterval(t);
    const windDown = Date.now();
    while ((churn.inFlight() || apiLoop.inFlight() || roster.inFlight()) && Date.now() - windDown < 30_000) await sleep(100);
    await sleep(3000);
    const final = { ...counters };
    const rowsAtEnd = db.rowCounts();
    // Roster items still outstanding go; then every client closes its stream.
    for (const [a, b] of rosterOutstanding.splice(0)) await rosterDelete(a, b).catch((err) => errors.add('roster cleanup', err));
    const longLived = [...chatters, ...silents, ...throttled];
    for (const s of throttled) s.link?.resume();
    await Promise.all(longLived.map((c) => c.client?.close(5000).catch(() => undefined)));
    await proxy.close();

    // Afterwards: every session gone, the file descriptors back to where they were.
    let sessionsAfter = NaN;
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(500)) {
      const res = await api('connected_users_number', {}).catch(() => undefined);
      sessionsAfter = res?.status === 200 ? Number(res.body) : NaN;
      if (sessionsAfter === 0) break;
    }
    await sleep(7000); // a closed connection's transport may linger 5 s
    const treeAfter = processTree(server.pid);
    const after = { sessions: sessionsAfter, fds: treeAfter.reduce((a, pid) => a + openFds(pid), 0), fdKinds: fdKinds(), rssMiB: round1(treeAfter.reduce((a, pid) => a + procStats(pid).rssMiB, 0)), rows: db.rowCounts() };
    /** File descriptors of kinds that are more numerous after the load than before it. */
    const fdsLeft = Object.entries(after.fdKinds)
      .map(([k, n]) => [k, n - (baseline.fdKinds[k] ?? 0)] as const)
      .filter(([, n]) => n > 0);
    const offlineRows = Object.entries(after.rows).filter(([name]) => /offline/i.test(name));

    stopping = true;
    db.close();
    db = undefined;
    const exitCode = serverExit ? serverExit.code : await server.stop(30_000);
    const crashed = serverExit !== undefined && serverExit.t < windDown;

    // Analysis.
    const samples = sampler.samples;
    const steady = samples.filter((s) => s.t >= WARMUP_S);
    /** A rule's series over the whole run (its lower envelope when the rule says so). */
    /** A rule's steady samples (their lower envelope when the rule says so, looking back no further than the warm-up's end). */
    const busyT = new Set(samples.filter((s) => s.otherCpuPct > BUSY_OTHER_PCT).map((s) => s.t / 60));
    // The envelope's window: the rule's, at most a quarter of the steady window (a short run keeps its slope).
    const steadySpanMin = steady.length ? (steady.at(-1)!.t - steady[0]!.t) / 60 : 0;
    const steadyOf = (rule: TrendRule) => {
      const points = steady.map((s) => ({ tMin: s.t / 60, value: (s as unknown as Record<string, number>)[rule.key]! }));
      return (rule.envelopeS ? lowerEnvelope(points, Math.min(rule.envelopeS / 60, steadySpanMin / 4)) : points).filter((p) => !(rule.quietOnly && busyT.has(p.tMin)));
    };
    const busySteady = steady.filter((s) => s.otherCpuPct > BUSY_OTHER_PCT).length;
    if (busySteady) notes.push(`${busySteady} of ${steady.length} steady samples were taken while other work used more than ${BUSY_OTHER_PCT} % of a core: the event-loop delay's trend leaves them out.`);
    const processCount = Math.max(1, ...steady.map((s) => s.processes.length));
    const RULES = rules(processCount);
    const verdicts: TrendVerdict[] = RULES.map((rule) => judge(rule, steadyOf(rule)));
    if (steady.length && steady.at(-1)!.t - steady[0]!.t < 300) notes.push('The steady window is under 5 minutes: a server still warming up (JIT code, caches) can look like a leak, and a slow leak cannot be seen. Run 30 minutes or more before trusting a verdict.');
    const info: TrendVerdict[] = (
      [
        { key: 'dbKiB', label: 'database on disk (file + -wal), not judged', unit: 'KiB', relative: 0.1, floor: 256 },
        { key: 'archiveKiB', label: 'message archive in use (mod_mam keeps every message), not judged', unit: 'KiB', relative: 0.1, floor: 256 },
        { key: 'heapMinMiB', label: 'V8 heap used, lowest of the interval, not judged', unit: 'MiB', relative: 0.1, floor: 4 },
        { key: 'heapNowMiB', label: 'V8 heap used at the sample, not judged', unit: 'MiB', relative: 0.1, floor: 4 },
        { key: 'cpuPct', label: 'CPU of the server, % of one core, not judged', unit: '%', relative: 0.25, floor: 5 },
      ] satisfies TrendRule[]
    ).map((rule) => judge(rule, steadyOf(rule)));

    const loadMin = loadSeconds / 60;
    const loginAttempts = final.logins + final.loginFailures;
    const lost = final.chatSent - final.chatReceived;
    const failures: string[] = [];
    for (const v of verdicts) if (v.n < 3) notes.push(`${v.label}: only ${v.n} samples to judge, not judged.`);
    for (const v of verdicts) if (!v.ok) failures.push(`${v.label} grows: +${round2(v.growth)} ${v.unit} over the steady window (tolerance ${round2(v.tolerance)} ${v.unit}; ${round2(v.slopePerMin)} ${v.unit}/min)`);
    if (steady.length < 3) failures.push(`only ${steady.length} steady samples: run longer or sample more often`);
    if (notes.some((n) => n.startsWith('The probe did not load'))) failures.push('the probe did not reach every server process');
    for (const [pid, seen] of sampler.pidsSeen) if (!sampler.probe.started.has(pid)) failures.push(`no probe in process ${pid} (${seen.role}, ${seen.cmdline})`);
    if (crashed) failures.push(`the server exited during the run (code ${serverExit!.code}, signal ${serverExit!.signal})`);
    else if (exitCode !== 0) failures.push(`the server's exit code after SIGINT was ${exitCode}`);
    if (after.fds - baseline.fds > 10) failures.push(`${after.fds - baseline.fds} more file descriptors open after the load than before it (${fdsLeft.map(([k, n]) => `${n} × ${k}`).join(', ')})`);
    if (!(after.sessions === 0)) failures.push(`${after.sessions} sessions still counted 20 s after every client closed`);
    if (loginAttempts && final.loginFailures / loginAttempts > MAX_ERROR_SHARE) failures.push(`${final.loginFailures} of ${loginAttempts} churn logins failed`);
    if (final.apiCalls && final.apiErrors / final.apiCalls > MAX_ERROR_SHARE) failures.push(`${final.apiErrors} of ${final.apiCalls} API calls failed`);
    if (final.rosterAdds && final.rosterErrors / (final.rosterAdds + final.rosterDeletes) > MAX_ERROR_SHARE) failures.push(`${final.rosterErrors} roster changes failed`);
    if (final.feedCalls && final.feedErrors / final.feedCalls > MAX_ERROR_SHARE) failures.push(`${final.feedErrors} of ${final.feedCalls} send_message feeds failed`);
    if (final.chatSent && lost / final.chatSent > MAX_LOST_SHARE) failures.push(`${lost} of ${final.chatSent} chat messages did not arrive`);
    if (final.chatterDrops) failures.push(`chat clients were disconnected ${final.chatterDrops} times`);
    if (final.slowCuts) failures.push(`slow clients (which keep up on average) were cut ${final.slowCuts} times`);

    const serverLog = scanServerLog(logFile);
    const procs = [...sampler.pidsSeen.entries()];
    const replaced = procs.filter(([, s]) => s.lastT < (samples.at(-1)?.t ?? 0) || s.firstT > (samples[0]?.t ?? 0));

    const chatSorted = Float64Array.from(allChatLatency).sort();
    const loginSorted = Float64Array.from(allLoginLatency).sort();
    const rate = (n: number, per: number) => round2(n / per);
    const loadSummary = {
      seconds: round1(loadSeconds),
      loginsPerMin: rate(final.logins, loadMin),
      loginFailures: final.loginFailures,
      loginP99Ms: round2(percentile(loginSorted, 99)),
      logouts: final.logouts,
      abortedConnections: final.aborts,
      chatMsgsPerSec: rate(final.chatReceived, loadSeconds),
      chatSent: final.chatSent,
      chatReceived: final.chatReceived,
      chatLost: lost,
      chatSkipped: final.chatSkipped,
      chatP50Ms: round2(percentile(chatSorted, 50)),
      chatP99Ms: round2(percentile(chatSorted, 99)),
      churnMessagesSent: final.churnSent,
      churnMessagesReceived: final.churnReceived,
      apiCallsPerSec: rate(final.apiCalls, loadSeconds),
      apiErrors: final.apiErrors,
      rosterChangesPerSec: rate(final.rosterAdds + final.rosterDeletes, loadSeconds),
      rosterAdds: final.rosterAdds,
      rosterDeletes: final.rosterDeletes,
      rosterErrors: final.rosterErrors,
      feedCallsPerSec: rate(final.feedCalls, loadSeconds),
      feedErrors: final.feedErrors,
      feedMiBRead: round1(final.feedBytesRead / MiB),
      stalledCuts: final.stalledCuts,
      stalledLifetimeS: round1(mean(stalledLifetimes)),
      silentKicks: final.silentKicks,
      silentLifetimeS: round1(mean(silentLifetimes)),
      slowCuts: final.slowCuts,
      chatterDrops: final.chatterDrops,
      generatorBehind: final.behind,
      generatorLoopP99MaxMs: Math.max(...samples.map((s) => s.generatorLoopP99Ms)),
      generatorCpuPct: round1(mean(samples.map((s) => s.generatorCpuPct))),
      serverCpuPct: round1(mean(samples.map((s) => s.cpuPct))),
      otherCpuPct: round1(mean(samples.map((s) => s.otherCpuPct))),
      otherCpuMaxPct: Math.max(...samples.map((s) => s.otherCpuPct)),
    };

    // Write it all.
    await mkdir(outDir, { recursive: true });
    const ok = failures.length === 0;
    const settings = {
      minutes: MINUTES, workers: WORKERS ?? null, sampleS: SAMPLE_S, warmupS: WARMUP_S, tls: TLS, loglevel: LOGLEVEL,
      loginRate: LOGIN_RATE, churnAccounts: CHURN_ACCOUNTS, pairs: PAIRS, msgRate: MSG_RATE, apiRate: API_RATE, rosterRate: ROSTER_RATE,
      rosterOutstanding: ROSTER_OUTSTANDING, slow: SLOW, stalled: STALLED, silent: SILENT, pingInterval: PING_INTERVAL, pingAckTimeout: PING_ACK_TIMEOUT,
    };
    const md: string[] = [];
    md.push(`## Soak test, ${new Date(startedAt).toISOString()}: ${ok ? 'PASS' : 'FAIL'}\n`);
    md.push(
      `${round1(loadMin)} min of load (warm-up ${Math.round(WARMUP_S)} s left out of the trends), a sample every ${SAMPLE_S} s; ` +
        `${WORKERS === undefined ? 'no `workers` option' : `\`workers: ${WORKERS}\``}, ${sampler.pidsSeen.size} server process(es) seen; ${TLS ? 'STARTTLS' : 'no TLS'}, SQLite, config.example.yml's modules + mod_ping send_pings ${PING_INTERVAL}/${PING_ACK_TIMEOUT} s. ` +
        `Machine: ${(machineInfo().cores as number)} cores, ${String(machineInfo().cpuModel)}, Node ${process.version}.\n`,
    );
    md.push(sampleTable(perMinute(samples), WARMUP_S));
    md.push(
      '\nRSS, fds and CPU are the sums over the server\'s processes (from /proc); heap is the sum of each process\'s V8 heap used right after its last full (mark-compact) collection, the live heap (probe); loop delay is the worst process\'s p99 over the interval; db KiB is service.db + service.db-wal on disk, "in use" (page_count − freelist_count) × page_size less the pages of the message archive (the tables and indexes of mod_mam, which grow with every message by design; see the archive line below); msgs/s are chat messages received.\n',
    );
    md.push('### Trends over the steady window\n');
    md.push('| metric | steady mean | slope per min | growth over the window | tolerance | verdict |\n|---|---:|---:|---:|---:|---|');
    for (const v of [...verdicts, ...info]) md.push(`| ${v.label} | ${round2(v.mean)} ${v.unit} | ${round2(v.slopePerMin)} | ${round2(v.growth)} ${v.unit} | ${v.label.endsWith('not judged') ? '—' : `${round2(v.tolerance)} ${v.unit}`} | ${v.label.endsWith('not judged') ? '—' : v.ok ? 'ok' : '**grows**'} |`);
    md.push(
      `\nA metric fails when its least-squares growth over the steady window is above its tolerance, max(relative × steady mean, floor) — ${RULES.map((r) => `${r.label.split(',')[0]!.split(' (')[0]} ${r.relative * 100} % / ${r.floor} ${r.unit}`).join('; ')} (memory floors: 16 and 4 MiB per server process, here ${processCount}, plus 8 MiB per stalled client) — and the median of the last third of the steady samples is above the first third's by more than half the tolerance. RSS and heap are judged on their lower envelope (each steady sample replaced by the lowest of the trailing minute, or quarter of the steady window if shorter, the warm-up left out): a leak raises the floor, a full collection V8 postpones for a while does not. The event-loop delay's trend leaves out samples taken while other work used more than ${BUSY_OTHER_PCT} % of a core.\n`,
    );
    // Per process: the first steady sample against the last one.
    const firstSteady = steady[0];
    const lastSample = samples.at(-1);
    if (firstSteady && lastSample) {
      md.push(`### Per process (${fmtT(firstSteady.t)} → ${fmtT(lastSample.t)})\n`);
      md.push('| pid | role | RSS MiB | heap live MiB | fds | CPU % (mean) | loop delay p99 ms (mean) |\n|---|---|---:|---:|---:|---:|---:|');
      for (const [pid, seen] of sampler.pidsSeen) {
        const a = firstSteady.processes.find((p) => p.pid === pid);
        const b = lastSample.processes.find((p) => p.pid === pid);
        const mine = samples.flatMap((s) => s.processes.filter((p) => p.pid === pid));
        const arrow = (x: number | undefined, y: number | undefined) => `${x === undefined ? '—' : cell(x)} → ${y === undefined ? '—' : cell(y)}`;
        md.push(`| ${pid} | ${seen.role} | ${arrow(a?.rssMiB, b?.rssMiB)} | ${arrow(a?.heapLiveMiB, b?.heapLiveMiB)} | ${a?.fds ?? '—'} → ${b?.fds ?? '—'} | ${cell(mean(mine.map((p) => p.cpuPct).filter(Number.isFinite)))} | ${cell(mean(mine.map((p) => p.loopP99Ms).filter(Number.isFinite)), 2)} |`);
      }
      md.push('');
    }
    md.push('### Load achieved\n');
    md.push('| | |\n|---|---|');
    md.push(`| churn logins | ${loadSummary.loginsPerMin}/min (${final.logins} ok, ${final.loginFailures} failed, p99 ${loadSummary.loginP99Ms} ms); ${final.logouts} stream closes, ${final.aborts} dropped connections |`);
    md.push(`| chat | ${loadSummary.chatMsgsPerSec} msg/s received (${final.chatReceived} of ${final.chatSent} sent, ${lost} missing, ${final.chatSkipped} skipped), p50 ${loadSummary.chatP50Ms} ms, p99 ${loadSummary.chatP99Ms} ms; churn sessions' messages ${final.churnReceived}/${final.churnSent} |`);
    md.push(`| HTTP API | ${loadSummary.apiCallsPerSec} calls/s (${final.apiCalls}, ${final.apiErrors} errors) |`);
    md.push(`| roster | ${loadSummary.rosterChangesPerSec} API calls/s (${final.rosterAdds} adds, ${final.rosterDeletes} deletes, ${final.rosterErrors} errors) |`);
    md.push(`| slow / stalled feeds | ${loadSummary.feedCallsPerSec} send_message/s (32 KiB to slow, 128 KiB to stalled clients; ${final.feedErrors} errors), ${loadSummary.feedMiBRead} MiB read by the clients; slow clients cut ${final.slowCuts} times; stalled clients cut by the server ${final.stalledCuts} times${final.stalledCuts ? ` (noticed ${loadSummary.stalledLifetimeS} s after login on average)` : ''} |`);
    md.push(`| silent clients | cut ${final.silentKicks} times (${final.silentKicks ? `after ${loadSummary.silentLifetimeS} s on average, ` : ''}ping_interval ${PING_INTERVAL} s + ping_ack_timeout ${PING_ACK_TIMEOUT} s) |`);
    md.push(`| load generator | skipped ${final.behind} units of work at its in-flight limits; its event-loop delay p99 at most ${loadSummary.generatorLoopP99MaxMs} ms; CPU ${loadSummary.generatorCpuPct} % of a core |`);
    md.push(`| CPU | server ${loadSummary.serverCpuPct} %, everything else on the machine ${loadSummary.otherCpuPct} % on average (at most ${loadSummary.otherCpuMaxPct} %), in % of one core |`);
    if (loadSummary.otherCpuPct > 25) notes.push(`Other work used ${loadSummary.otherCpuPct} % of a core on average during the run (a build, a test suite?): latencies and loop delays are not worth quoting; trends may be too.`);
    if (fdsLeft.length) md.push(`\nFile descriptors left after the load, more than before it: ${fdsLeft.map(([k, n]) => `${n} × ${k}`).join(', ')}.`);
    md.push(`\nAfter every client closed: ${after.sessions} sessions, ${after.fds} fds (${baseline.fds} before the load), RSS ${after.rssMiB} MiB. Offline messages stored: ${offlineRows.map(([n, c]) => `${n} ${c}`).join(', ') || 'no offline table'}.`);
    const rowDiff = Object.keys(rowsAtEnd)
      .map((name) => ({ name, steady: rowsAtSteady?.[name] ?? NaN, end: rowsAtEnd[name]!, before: baseline.rows[name] ?? 0 }))
      .filter((r) => r.end !== r.before || r.end !== r.steady);
    const archived = (rowsAtEnd.mam_messages ?? 0) - (rowsAtSteady?.mam_messages ?? NaN);
    const archiveGrowth = (samples.at(-1)?.archiveKiB ?? NaN) - (steady[0]?.archiveKiB ?? NaN);
    if (archived > 0 && Number.isFinite(archiveGrowth)) {
      md.push(`\nMessage archive: ${round1(archiveGrowth)} KiB more over the steady window for ${archived} rows archived (a message is archived once for each local account it concerns), ${Math.round((archiveGrowth * 1024) / archived)} bytes a row (table and indexes).`);
    }
    if (rowDiff.length) md.push(`\nTable rows (before the load → start of steady state → end of the load): ${rowDiff.map((r) => `${r.name} ${r.before} → ${r.steady} → ${r.end}`).join('; ')}.`);
    if (replaced.length > 1 || (replaced.length === 1 && replaced[0]![0] !== server.pid)) md.push(`\nProcesses that came or went during the run: ${replaced.map(([pid, s]) => `${pid} (${s.role}, ${fmtT(s.firstT)}–${fmtT(s.lastT)})`).join(', ')}.`);
    if (errors.counts.size) {
      md.push('\n### Errors\n');
      for (const [k, n] of [...errors.counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20)) md.push(`- ${n} × ${k}`);
    }
    md.push(`\n### Server log\n\n${serverLog.total} lines at warning or above${serverLog.other.length ? `, ${serverLog.other.length} lines that are not JSON` : ''}.`);
    for (const m of serverLog.byMessage.slice(0, 15)) md.push(`- ${m.count} × ${m.level}: ${m.msg}`);
    for (const line of serverLog.other.slice(0, 5)) md.push(`- not JSON: \`${line}\``);
    if (INJECT_LEAK_KIB) notes.push(`Self-check run: the probe leaked ${INJECT_LEAK_KIB} KiB of heap a second in every server process (--inject-leak).`);
    for (const n of notes) md.push(`\n${n}`);
    md.push(`\n### Verdict: ${ok ? 'PASS' : 'FAIL'}\n`);
    for (const f of failures) md.push(`- ${f}`);
    md.push(`\nAll samples: samples.md, samples.csv and samples.json in ${relative(REPO, outDir)}.`);

    // Plot.
    const series: PlotSeries[] = (['rssMiB', 'heapMiB', 'fds', 'loopP99Ms', 'dbKiB', 'dbUsedKiB', 'cpuPct'] as const).map((key) => {
      const v = [...verdicts, ...info].find((x) => x.key === key);
      const rule = RULES.find((r) => r.key === key);
      const steadyPts = (rule ? steadyOf(rule) : steady.map((s) => ({ tMin: s.t / 60, value: s[key] }))).filter((p) => Number.isFinite(p.value));
      return {
        label: { rssMiB: 'RSS', heapMiB: 'V8 heap after the last full GC', fds: 'open fds', loopP99Ms: 'event-loop delay p99', dbKiB: 'database on disk', dbUsedKiB: 'database in use outside the archive', cpuPct: 'CPU' }[key],
        unit: { rssMiB: 'MiB', heapMiB: 'MiB', fds: 'fds', loopP99Ms: 'ms', dbKiB: 'KiB', dbUsedKiB: 'KiB', cpuPct: '% of a core' }[key],
        points: samples.map((s) => ({ tMin: s.t / 60, value: s[key] })),
        envelope: rule?.envelopeS ? steadyOf(rule) : undefined,
        fit: v && steadyPts.length ? { from: steadyPts[0]!.tMin, to: steadyPts.at(-1)!.tMin, slopePerMin: v.slopePerMin, meanT: mean(steadyPts.map((p) => p.tMin)), meanV: v.mean } : undefined,
      };
    });
    await writeFile(join(outDir, 'plot.svg'), svgPlot(`soak ${stamp}: ${ok ? 'PASS' : 'FAIL'} (grey dashes: end of warm-up; green: lower envelope judged; red: fitted trend)`, series, WARMUP_S / 60));
    const pngNote = await renderPng(join(outDir, 'plot.svg'), join(outDir, 'plot.png'));
    md.push(pngNote ? `Plot: plot.svg (${pngNote}).` : 'Plot: plot.png (and plot.svg).');

    const summary = md.join('\n');
    await writeFile(join(outDir, 'summary.md'), `${summary}\n`);
    await writeFile(join(outDir, 'samples.md'), `${sampleTable(samples, WARMUP_S)}\n`);
    await writeFile(join(outDir, 'samples.csv'), csv(samples));
    await writeFile(
      join(outDir, 'samples.json'),
      JSON.stringify({ date: new Date(startedAt).toISOString(), machine: machineInfo(), settings, config, ok, failures, verdicts, info, load: loadSummary, errors: Object.fromEntries(errors.counts), after: { ...after, baselineFds: baseline.fds }, rows: { before: baseline.rows, steady: rowsAtSteady, end: rowsAtEnd }, processes: Object.fromEntries(sampler.pidsSeen), serverLog, exitCode, samples }, null, 2),
    );
    await copyFile(logFile, join(outDir, 'server.log')).catch(() => undefined);
    await cp(probeDir, join(outDir, 'probe'), { recursive: true }).catch(() => undefined);
    console.log(`\n${summary}\n\nResults: ${relative(REPO, outDir)}/`);
    return ok ? 0 : 1;
  } catch (err) {
    log(`failed: ${(err as Error).stack ?? err}`);
    log(`server log tail:\n${tail(logFile)}`);
    return 2;
  } finally {
    stopping = true;
    for (const t of timers) clearInterval(t);
    for (const c of [...chatters, ...silents, ...throttled]) c.client?.destroy();
    await proxy?.close().catch(() => undefined);
    db?.close();
    await server.stop(10_000).catch(() => undefined);
    if (opts.keep) log(`kept ${tmp}`);
    else await rm(tmp, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(2);
  },
);
