/**
 * Pieces of the soak test (bench/soak/run.ts): the server's process tree and what /proc says about each
 * process, the in-process probe's lines (bench/soak/probe.mjs), the SQLite file's size on disk and in use,
 * a throttling TCP proxy for slow readers, the trend analysis and an SVG plot.
 */
import { readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { clkTck } from '../api/lib.js';
import { openFds, vmRssMiB } from '../c2s/lib.js';

// ---------------------------------------------------------------------------------------------------------
// The process tree

/** `pid` and all its descendants (children from /proc/<pid>/task/<tid>/children, recursively), pid first. */
export function processTree(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    out.push(p);
    for (const child of childrenOf(p)) visit(child);
  };
  visit(pid);
  return out;
}

function childrenOf(pid: number): number[] {
  const children = new Set<number>();
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  for (const tid of tasks) {
    try {
      for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/)) if (c) children.add(Number(c));
    } catch {
      // the thread ended meanwhile
    }
  }
  return [...children].sort((a, b) => a - b);
}

export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

/** utime + stime of a process (all its threads), in seconds; NaN when it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clkTck();
  } catch {
    return NaN;
  }
}

export interface ProcStats {
  pid: number;
  rssMiB: number;
  fds: number;
  cpuS: number;
}

export function procStats(pid: number): ProcStats {
  let rssMiB = NaN;
  try {
    rssMiB = vmRssMiB(pid);
  } catch {
    // gone
  }
  return { pid, rssMiB, fds: openFds(pid), cpuS: cpuSeconds(pid) };
}

const TCP_STATES: Record<string, string> = {
  '01': 'ESTABLISHED', '02': 'SYN_SENT', '03': 'SYN_RECV', '04': 'FIN_WAIT1', '05': 'FIN_WAIT2', '06': 'TIME_WAIT',
  '07': 'CLOSE', '08': 'CLOSE_WAIT', '09': 'LAST_ACK', '0A': 'LISTEN', '0B': 'CLOSING',
};

/**
 * What a process's file descriptors are, counted by kind: TCP sockets by state and local port (named through
 * `ports`), unix sockets, pipes, files (by path), anything else by its link's type.
 */
export function describeFds(pid: number, ports: Record<number, string> = {}): Record<string, number> {
  const tcp = new Map<string, { state: string; local: number; remote: string }>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const local = parseInt(f[1]!.split(':')[1]!, 16);
      const remote = parseInt(f[2]!.split(':')[1]!, 16);
      tcp.set(f[9]!, { state: TCP_STATES[f[3]!] ?? f[3]!, local, remote: ports[remote] ?? 'a client' });
    }
  }
  const out: Record<string, number> = {};
  const add = (k: string) => (out[k] = (out[k] ?? 0) + 1);
  let fds: string[] = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    let target = '';
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    const socket = /^socket:\[(\d+)\]$/.exec(target);
    if (socket) {
      const t = tcp.get(socket[1]!);
      if (t) add(`tcp ${t.state} on ${ports[t.local] ?? `port ${t.local}`}${t.state === 'LISTEN' ? '' : ports[t.local] ? '' : ` to ${t.remote}`}`);
      else add('socket (unix or other)');
    } else if (target.startsWith('pipe:')) add('pipe');
    else if (target.startsWith('anon_inode:')) add(target);
    else if (target.startsWith('/')) add(`file ${target.replace(/\/tmp\/bench-soak-[^/]+/, '<tmp>')}`);
    else add(target.replace(/\[\d+\]$/, ''));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// The probe's lines

export interface ProbeLine {
  t: number;
  intervalMs: number;
  pid: number;
  ppid: number;
  role: string;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  heapUsedMin: number;
  heapUsedMax: number;
  /** used_heap_size right after the last full collection (null before the first one). */
  heapAfterMajorGc: number | null;
  majorGcAt: number | null;
  gc: { major: number; minor: number; ms: number };
  loopDelayMs: { mean: number; p50: number; p99: number; max: number; count: number };
}

/** Reads the probe files of a directory as they grow (one per pid), keeping each one's last sample. */
export class ProbeReader {
  readonly #offsets = new Map<number, number>();
  readonly latest = new Map<number, ProbeLine>();
  /** Pids whose probe said it started (NODE_OPTIONS reached them). */
  readonly started = new Map<number, { argv: string[]; execArgv: string[] }>();

  constructor(readonly dir: string) {}

  poll(): void {
    let files: string[] = [];
    try {
      files = readdirSync(this.dir).filter((f) => f.endsWith('.jsonl'));
    } catch {
      return;
    }
    for (const file of files) {
      const pid = Number(file.slice(0, -'.jsonl'.length));
      const text = readFileSync(join(this.dir, file), 'utf8');
      const from = this.#offsets.get(pid) ?? 0;
      const end = text.lastIndexOf('\n') + 1;
      if (end <= from) continue;
      for (const line of text.slice(from, end).split('\n')) {
        if (!line) continue;
        const parsed = JSON.parse(line) as ProbeLine & { started?: boolean; argv?: string[]; execArgv?: string[] };
        if (parsed.started) this.started.set(pid, { argv: parsed.argv ?? [], execArgv: parsed.execArgv ?? [] });
        else this.latest.set(pid, parsed);
      }
      this.#offsets.set(pid, end);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// The database

export function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

type Db = import('better-sqlite3').Database;

/**
 * A read-only connection to the server's SQLite file (WAL lets it read while the server writes; it takes
 * no lock between two questions and never checkpoints).
 */
export class DbObserver {
  readonly #db: Db;
  private constructor(db: Db, readonly file: string) {
    this.#db = db;
  }

  static async open(file: string): Promise<DbObserver> {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    return new DbObserver(db, file);
  }

  /** Bytes on disk: the database file plus its -wal. */
  onDisk(): { dbBytes: number; walBytes: number } {
    return { dbBytes: fileSize(this.file), walBytes: fileSize(`${this.file}-wal`) };
  }

  /** Bytes in use: (page_count − freelist_count) × page_size, as of the last commit (WAL included). */
  usedBytes(): number {
    const pageSize = this.#db.pragma('page_size', { simple: true }) as number;
    const pages = this.#db.pragma('page_count', { simple: true }) as number;
    const free = this.#db.pragma('freelist_count', { simple: true }) as number;
    return (pages - free) * pageSize;
  }

  /**
   * Bytes of the message archive's pages (mod_mam's tables and their indexes, from SQLite's dbstat): kept on
   * purpose, it grows with every message archived, so the soak judges the database without it.
   */
  archiveBytes(): number {
    return (this.#db.prepare("select coalesce(sum(pgsize), 0) as bytes from dbstat where name like 'mam\\_%' escape '\\'").get() as { bytes: number }).bytes;
  }

  /** Rows of every table. */
  rowCounts(): Record<string, number> {
    const tables = this.#db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name").all() as Array<{ name: string }>;
    const out: Record<string, number> = {};
    for (const { name } of tables) out[name] = (this.#db.prepare(`select count(*) as n from "${name.replace(/"/g, '""')}"`).get() as { n: number }).n;
    return out;
  }

  close(): void {
    this.#db.close();
  }
}

// ---------------------------------------------------------------------------------------------------------
// A proxy that stops reading from the server: slow and stalled clients

/**
 * A TCP proxy in front of the server's c2s port for slow readers. Each client connects from its own
 * source address; the link for that address forwards both ways, and `pause()` stops reading what the
 * server sends (the proxy's receive window fills, then the server's send buffer, then the server's own
 * write queue), `resume()` reads again. The client's own writes always go through.
 */
export class ThrottleProxy {
  readonly #server: Server;
  readonly #links = new Map<string, ThrottleLink>();
  port = 0;

  constructor(readonly upstreamPort: number) {
    this.#server = createServer((down) => this.#accept(down));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen({ port: 0, host: '127.0.0.1' }, () => resolve());
    });
    this.port = (this.#server.address() as import('node:net').AddressInfo).port;
  }

  /** The current link of a client (by its source address). */
  link(address: string): ThrottleLink | undefined {
    return this.#links.get(address);
  }

  close(): Promise<void> {
    for (const link of this.#links.values()) link.destroy();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #accept(down: Socket): void {
    const address = (down.remoteAddress ?? '').replace(/^::ffff:/, '');
    const up = netConnect({ port: this.upstreamPort, host: '127.0.0.1' });
    const link = new ThrottleLink(down, up);
    this.#links.set(address, link);
    const done = () => {
      link.destroy();
      if (this.#links.get(address) === link) this.#links.delete(address);
    };
    down.on('close', done);
    up.on('close', done);
  }
}

export class ThrottleLink {
  #paused = false;
  /** Bytes forwarded from the server to the client. */
  bytesDown = 0;
  /** Why the server side ended, if it did with an error (e.g. ECONNRESET: the server cut the connection). */
  upError: string | undefined;

  constructor(
    readonly down: Socket,
    readonly up: Socket,
  ) {
    down.setNoDelay(true);
    up.setNoDelay(true);
    down.on('data', (chunk: Buffer) => up.write(chunk));
    up.on('data', (chunk: Buffer) => {
      this.bytesDown += chunk.byteLength;
      down.write(chunk);
    });
    down.on('error', () => {});
    up.on('error', (err: NodeJS.ErrnoException) => {
      this.upError = err.code ?? err.message;
    });
  }

  get paused(): boolean {
    return this.#paused;
  }

  pause(): void {
    this.#paused = true;
    this.up.pause();
  }

  resume(): void {
    this.#paused = false;
    this.up.resume();
  }

  destroy(): void {
    this.down.destroy();
    this.up.destroy();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Statistics

export function mean(values: number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
}

export function median(values: number[]): number {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Least-squares slope of y over x (NaN with fewer than two distinct x). */
export function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  if (n < 2) return NaN;
  const mx = mean(xs);
  const my = mean(ys);
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

export interface TrendRule {
  /** Key of the metric in a sample. */
  key: string;
  label: string;
  unit: string;
  /** Allowed growth over the steady window, as a share of the steady mean… */
  relative: number;
  /** …and never less than this, in the metric's unit. */
  floor: number;
  /**
   * Judge the lower envelope instead of the samples: each sample replaced by the lowest of the trailing
   * `envelopeS` seconds (run.ts shortens it to a quarter of a short steady window). A leak raises the floor; a
   * transient peak shorter than the window (a full collection V8 postpones, a stalled client's queue) does not.
   */
  envelopeS?: number;
  /** Leave out the samples taken while other work kept the machine busy (the metric would measure it). */
  quietOnly?: boolean;
}

/** Each point replaced by the lowest value of the points in the trailing `windowMin` minutes (itself included). */
export function lowerEnvelope(points: Array<{ tMin: number; value: number }>, windowMin: number): Array<{ tMin: number; value: number }> {
  return points.map((p) => {
    let low = p.value;
    for (const q of points) if (q.tMin <= p.tMin && q.tMin > p.tMin - windowMin - 1e-9 && Number.isFinite(q.value) && !(q.value >= low)) low = q.value;
    return { tMin: p.tMin, value: low };
  });
}

export interface TrendVerdict {
  key: string;
  label: string;
  unit: string;
  mean: number;
  /** Fitted slope, unit per minute. */
  slopePerMin: number;
  /** slope × the steady window's length. */
  growth: number;
  /** median(last third) − median(first third) of the steady samples. */
  thirdsDelta: number;
  tolerance: number;
  /** Samples judged. */
  n: number;
  ok: boolean;
}

/**
 * A metric fails when the least-squares growth over the steady window exceeds the tolerance
 * (max(relative × mean, floor)) and the median of the last third of the steady samples is above the median of
 * the first third by more than half the tolerance (a sustained rise, not one outlier at an end).
 */
export function judge(rule: TrendRule, points: Array<{ tMin: number; value: number }>): TrendVerdict {
  const usable = points.filter((p) => Number.isFinite(p.value));
  const xs = usable.map((p) => p.tMin);
  const ys = usable.map((p) => p.value);
  const m = mean(ys);
  const s = slope(xs, ys);
  const span = xs.length ? xs[xs.length - 1]! - xs[0]! : 0;
  const growth = s * span;
  const third = Math.max(1, Math.floor(ys.length / 3));
  const thirdsDelta = median(ys.slice(-third)) - median(ys.slice(0, third));
  const tolerance = Math.max(rule.relative * Math.abs(m), rule.floor);
  const ok = !(growth > tolerance && thirdsDelta > tolerance / 2);
  return { key: rule.key, label: rule.label, unit: rule.unit, mean: m, slopePerMin: s, growth, thirdsDelta, tolerance, n: usable.length, ok: usable.length < 3 ? true : ok };
}

// ---------------------------------------------------------------------------------------------------------
// A plot

export interface PlotSeries {
  label: string;
  unit: string;
  points: Array<{ tMin: number; value: number }>;
  /** The lower envelope judged instead of the points, if any (drawn thin). */
  envelope?: Array<{ tMin: number; value: number }>;
  /** The fitted line over the steady window, if any. */
  fit?: { from: number; to: number; slopePerMin: number; meanT: number; meanV: number };
}

/** Small multiples, one panel per series, a dashed line where the warm-up ends. */
export function svgPlot(title: string, series: PlotSeries[], warmupMin: number): string {
  const W = 900;
  const PH = 150;
  const top = 40;
  const left = 70;
  const right = 20;
  const H = top + series.length * (PH + 30) + 20;
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`, `<rect width="${W}" height="${H}" fill="white"/>`, `<text x="${left}" y="22" font-size="14">${esc(title)}</text>`];
  const allT = series.flatMap((s) => s.points.map((p) => p.tMin));
  const tMax = Math.max(1e-9, ...allT);
  series.forEach((s, i) => {
    const y0 = top + i * (PH + 30);
    const values = s.points.map((p) => p.value).filter(Number.isFinite);
    let lo = values.length ? Math.min(...values) : 0;
    let hi = values.length ? Math.max(...values) : 1;
    if (hi - lo < 1e-9) {
      lo -= 1;
      hi += 1;
    }
    const pad = (hi - lo) * 0.1;
    lo = Math.max(0, lo - pad);
    hi += pad;
    const X = (t: number) => left + (t / tMax) * (W - left - right);
    const Y = (v: number) => y0 + PH - ((v - lo) / (hi - lo)) * PH;
    parts.push(`<rect x="${left}" y="${y0}" width="${W - left - right}" height="${PH}" fill="none" stroke="#ccc"/>`);
    parts.push(`<text x="${left + 4}" y="${y0 + 13}">${esc(`${s.label} (${s.unit})`)}</text>`);
    parts.push(`<text x="${left - 4}" y="${y0 + 10}" text-anchor="end">${fmt(hi)}</text><text x="${left - 4}" y="${y0 + PH}" text-anchor="end">${fmt(lo)}</text>`);
    parts.push(`<line x1="${X(warmupMin)}" y1="${y0}" x2="${X(warmupMin)}" y2="${y0 + PH}" stroke="#999" stroke-dasharray="4 3"/>`);
    const pts = s.points.filter((p) => Number.isFinite(p.value)).map((p) => `${X(p.tMin).toFixed(1)},${Y(p.value).toFixed(1)}`);
    parts.push(`<polyline points="${pts.join(' ')}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>`);
    if (s.envelope) {
      const env = s.envelope.filter((p) => Number.isFinite(p.value)).map((p) => `${X(p.tMin).toFixed(1)},${Y(p.value).toFixed(1)}`);
      parts.push(`<polyline points="${env.join(' ')}" fill="none" stroke="#2ca02c" stroke-width="1" stroke-dasharray="2 2"/>`);
    }
    if (s.fit && Number.isFinite(s.fit.slopePerMin)) {
      const f = s.fit;
      const at = (t: number) => f.meanV + f.slopePerMin * (t - f.meanT);
      parts.push(`<line x1="${X(f.from)}" y1="${Y(at(f.from))}" x2="${X(f.to)}" y2="${Y(at(f.to))}" stroke="#d62728" stroke-width="1"/>`);
    }
    parts.push(`<text x="${W - right}" y="${y0 + PH + 14}" text-anchor="end">${fmt(tMax)} min</text><text x="${left}" y="${y0 + PH + 14}">0</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

function fmt(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
}
