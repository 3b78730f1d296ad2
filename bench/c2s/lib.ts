/**
 * Pieces of the client-connection benchmark: the configuration, the real server as a child process with a
 * memory probe on an IPC channel, the pool of load-generator processes, and CPU accounting that covers the
 * generators too. The rest (seeding, waiting for a quiet machine, percentiles, machine description) comes
 * from bench/api/lib.ts.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ADMIN_JID, HOST, REPO, benchConfig, clkTck, type BenchModules, round1, startServer, type LogLevel } from '../api/lib.js';
import type { WorkerCommand, WorkerReply } from './worker.js';

export const TLS_CERT = join(REPO, 'test/fixtures/tls/localhost.pem');
export const TLS_CA = join(REPO, 'test/fixtures/tls/ca.pem');
const PROBE = join(REPO, 'bench/c2s/memory-probe.mjs');
const WORKER = join(REPO, 'bench/c2s/worker.ts');

export type Mode = 'plain' | 'tls';

/**
 * bench/api's configuration (HTTP API on `httpPort` for readiness and status, SQLite, admin ACL) plus a
 * c2s listener on `c2sPort`: STARTTLS offered, required only in `tls` mode, the test certificate. No
 * XMPP module: one-to-one messages to full JIDs need none.
 */
export function c2sConfig(options: { httpPort: number; c2sPort: number; dataDir: string; loglevel: LogLevel; mode: Mode; modules?: BenchModules }): Record<string, unknown> {
  const config = benchConfig({ port: options.httpPort, dataDir: options.dataDir, loglevel: options.loglevel, modules: options.modules });
  (config.listen as unknown[]).push({
    port: options.c2sPort,
    ip: '127.0.0.1',
    module: 'service_c2s',
    starttls: true,
    starttls_required: options.mode === 'tls',
  });
  config.certfiles = [TLS_CERT];
  return config;
}

export interface ServerMemory {
  /** VmRSS from /proc after the collection, MiB. */
  rssMiB: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
  arrayBuffersMiB: number;
  /** Whether a full GC ran first (the probe needs --expose-gc). */
  gc: boolean;
}

export interface C2sServer {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly logFile: string;
  /** The open-files limit the server runs with (soft, hard), from /proc/<pid>/limits. */
  readonly fdLimit: { soft: number; hard: number };
  /** Full GC in the server, then its memory. */
  memory(): Promise<ServerMemory>;
  stop(graceMs?: number): Promise<number | null>;
}

const MiB = 1024 * 1024;

/**
 * `node --expose-gc --import bench/c2s/memory-probe.mjs cli/dist/servicectl.js --config FILE foreground`,
 * output appended to `logFile`, with an IPC channel for the probe; waits until POST /api/status answers.
 */
export async function startC2sServer(options: { configFile: string; httpPort: number; logFile: string; readyTimeoutMs?: number }): Promise<C2sServer> {
  const { child, stop } = await startServer({
    configFile: options.configFile,
    port: options.httpPort,
    logFile: options.logFile,
    nodeArgs: ['--expose-gc', ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), '--import', pathToFileURL(PROBE).href],
    readyTimeoutMs: options.readyTimeoutMs,
    ipc: true,
  });
  const pid = child.pid!;
  let nextId = 0;
  const memory = (): Promise<ServerMemory> =>
    new Promise((resolve, reject) => {
      const id = ++nextId;
      const timer = setTimeout(() => reject(new Error('the server did not answer the memory probe')), 60_000);
      const onMessage = (m: { type?: string; id?: number; gc: boolean; heapUsed: number; heapTotal: number; external: number; arrayBuffers: number }) => {
        if (m?.type !== 'memory' || m.id !== id) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve({
          rssMiB: vmRssMiB(pid),
          heapUsedMiB: m.heapUsed / MiB,
          heapTotalMiB: m.heapTotal / MiB,
          externalMiB: m.external / MiB,
          arrayBuffersMiB: m.arrayBuffers / MiB,
          gc: m.gc,
        });
      };
      child.on('message', onMessage);
      child.send({ type: 'memory', id });
    });
  return { child, pid, logFile: options.logFile, fdLimit: fdLimit(pid), memory, stop };
}

export function vmRssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

export function fdLimit(pid: number | 'self'): { soft: number; hard: number } {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
  const [soft, hard] = (line ?? '').replace('Max open files', '').trim().split(/\s+/);
  return { soft: Number(soft), hard: Number(hard) };
}

/** Open file descriptors of a process (NaN when /proc does not say). */
export function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Load-generator processes

/** A command without its id (the pool numbers them). */
export type WorkerRequest = WorkerCommand extends infer C ? (C extends { id: number } ? Omit<C, 'id'> : never) : never;

export interface Worker {
  readonly index: number;
  readonly child: ChildProcess;
  readonly localAddress: string;
  call<T>(command: WorkerRequest): Promise<T>;
}

/** The source address of worker `index`: 127.0.0.11, .12… (all of 127/8 is on the loopback interface). */
export function workerAddress(index: number): string {
  return `127.0.0.${11 + index}`;
}

export function forkWorkers(count: number): Worker[] {
  return Array.from({ length: count }, (_, index) => {
    const child = fork(WORKER, [], { execArgv: ['--import', 'tsx'], serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let nextId = 0;
    const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
    child.on('message', (reply: WorkerReply) => {
      const p = pending.get(reply.id);
      if (!p) return;
      pending.delete(reply.id);
      if (reply.type === 'done') p.resolve(reply.result);
      else p.reject(new Error(`worker ${index}: ${reply.message}`));
    });
    child.on('exit', (code) => {
      for (const p of pending.values()) p.reject(new Error(`worker ${index} exited (code ${code})`));
      pending.clear();
    });
    return {
      index,
      child,
      localAddress: workerAddress(index),
      call<T>(command: WorkerRequest): Promise<T> {
        const id = ++nextId;
        return new Promise<T>((resolve, reject) => {
          pending.set(id, { resolve, reject });
          child.send({ ...command, id });
        });
      },
    };
  });
}

export async function stopWorkers(workers: Worker[]): Promise<void> {
  await Promise.all(
    workers.map(async (w) => {
      if (w.child.exitCode !== null) return;
      const exited = new Promise((r) => w.child.once('exit', r));
      await w.call({ type: 'exit' }).catch(() => undefined);
      const timer = setTimeout(() => w.child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }),
  );
}

// ---------------------------------------------------------------------------------------------------------
// CPU of the server, the generators and the rest of the machine

function statTicks(pid: number, tid?: number): number {
  try {
    const text = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

function machineTicks(): { busy: number; total: number } {
  const v = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

export interface CpuMark {
  at: number;
  server: number;
  serverMain: number;
  generators: number;
  machine: { busy: number; total: number };
  self: NodeJS.CpuUsage;
}

export function cpuMark(serverPid: number, workerPids: number[]): CpuMark {
  return {
    at: performance.now(),
    server: statTicks(serverPid),
    serverMain: statTicks(serverPid, serverPid),
    generators: workerPids.reduce((sum, pid) => sum + statTicks(pid), 0),
    machine: machineTicks(),
    self: process.cpuUsage(),
  };
}

export interface CpuShare {
  /** Percent of one core: the server process (all threads). */
  server: number;
  /** The server's main thread (its event loop). */
  serverMain: number;
  /** The load-generator processes together, plus this driver. */
  generators: number;
  /** Everything else on the machine: well above zero, the figures were measured on a busy machine. */
  other: number;
}

export function cpuShare(a: CpuMark, b: CpuMark): CpuShare {
  const seconds = (b.at - a.at) / 1000;
  const pct = (ticks: number) => (ticks / clkTck() / seconds) * 100;
  const self = ((b.self.user + b.self.system - a.self.user - a.self.system) / 1e6 / seconds) * 100;
  const machineTotal = b.machine.total - a.machine.total;
  const machine = machineTotal > 0 ? ((b.machine.busy - a.machine.busy) / machineTotal) * 100 * cpus().length : 0;
  const server = pct(b.server - a.server);
  const generators = pct(b.generators - a.generators) + self;
  return { server: round1(server), serverMain: round1(pct(b.serverMain - a.serverMain)), generators: round1(generators), other: round1(Math.max(0, machine - server - generators)) };
}

export { ADMIN_JID, HOST };
