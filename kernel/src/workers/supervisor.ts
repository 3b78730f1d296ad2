/**
 * The primary process of a server with several workers (`workers: auto` or a number): it forks the workers
 * with node:cluster, so they share the configured listeners (the primary accepts HTTP connections and hands
 * them out in turn; each worker accepts XMPP clients on a c2s socket of its own, own-socket.ts), tells them which workers are up, relays the server actions one worker applies to the others,
 * starts a worker again when one dies (its sessions end; their contacts are told once), and stops them all.
 * It opens no database and serves no client: everything the server does, the workers do.
 *
 * Worker 1 starts first and alone, so the database's migrations run once before the others open it; it also
 * serves the control socket (servicectl), whose commands see the whole server.
 */
import cluster, { type Worker } from 'node:cluster';
import type { LogService } from '../log/log-service.js';
import type { Logger } from '../log/logger.js';
import type { PrimaryToWorker, WorkerToPrimary } from './messages.js';

/** Environment variables that make a forked process a worker, and say which. */
export const WORKER_INDEX_ENV = 'SERVICE_WORKER_INDEX';
export const WORKER_COUNT_ENV = 'SERVICE_WORKER_COUNT';
/** Set for a worker forked while no other runs (worker 1 at the start): see WorkerIdentity.alone. */
export const WORKER_ALONE_ENV = 'SERVICE_WORKER_ALONE';

/** A worker that dies this many times within CRASH_WINDOW_MS stops the server: it would only die again. */
const MAX_CRASHES = 5;
const CRASH_WINDOW_MS = 60_000;
const RESTART_DELAY_MS = 500;
/** How long a graceful stop waits for the workers before killing them. */
const STOP_TIMEOUT_MS = 30_000;

export class WorkerStartError extends Error {
  constructor(
    message: string,
    /** The failed worker's exit status (servicectl exits with it: a configuration error stays one). */
    readonly status: number,
  ) {
    super(message);
  }
}

export class WorkerSupervisor {
  readonly #workers = new Map<number, Worker>();
  readonly #ready = new Set<number>();
  readonly #crashes: number[] = [];
  #stopping?: Promise<void>;
  #started = false;

  private constructor(
    readonly count: number,
    private readonly logs: LogService,
    private readonly onExit: (status: number) => void,
  ) {}

  get logger(): Logger {
    return this.logs.logger;
  }

  /** Forks the workers, worker 1 first; resolves once all serve, rejects (all stopped) when one cannot start. */
  static async start(count: number, logs: LogService, onExit: (status: number) => void): Promise<WorkerSupervisor> {
    const supervisor = new WorkerSupervisor(count, logs, onExit);
    try {
      await supervisor.#fork(1);
      await Promise.all(Array.from({ length: count - 1 }, (_, i) => supervisor.#fork(i + 2)));
    } catch (err) {
      await supervisor.#stopAll();
      throw err;
    }
    supervisor.#started = true;
    logs.logger.notice({ workers: count, pids: [...supervisor.#workers.values()].map((w) => w.process.pid) }, '%d workers serve', count);
    return supervisor;
  }

  /** The pids of the workers that run now (tests and tools). */
  pids(): number[] {
    return [...this.#workers.values()].map((w) => w.process.pid!).filter(Boolean);
  }

  /** Stops every worker gracefully, then the log. */
  shutdown(): Promise<void> {
    this.#stopping ??= (async () => {
      await this.#stopAll();
      this.logger.notice('service stopped');
      await this.logs.close();
    })();
    return this.#stopping;
  }

  /** Forks worker `index`; resolves when it serves, rejects when it exits first. */
  #fork(index: number): Promise<void> {
    const alone = this.#workers.size === 0 ? { [WORKER_ALONE_ENV]: '1' } : {};
    const worker = cluster.fork({ [WORKER_INDEX_ENV]: String(index), [WORKER_COUNT_ENV]: String(this.count), ...alone });
    this.#workers.set(index, worker);
    return new Promise((resolve, reject) => {
      let serving = false;
      worker.on('message', (message: WorkerToPrimary) => {
        if (message.t === 'ready' && !serving) {
          serving = true;
          resolve();
        }
        this.#fromWorker(index, message);
      });
      worker.on('exit', (code, signal) => {
        if (!serving) reject(new WorkerStartError(`worker ${index} could not start (${signal ? `signal ${signal}` : `exit status ${code}`})`, code || 1));
        this.#exited(index, worker, code, signal);
      });
    });
  }

  #fromWorker(index: number, message: WorkerToPrimary): void {
    switch (message.t) {
      case 'ready':
        this.#ready.add(index);
        this.#toAll({ t: 'peers', peers: [...this.#ready].sort((a, b) => a - b) });
        return;
      case 'action':
        this.#toAll({ t: 'action', action: message.action }, index);
        return;
      case 'exit':
        if (message.status === 0) void this.shutdown().then(() => this.onExit(0));
        else this.#halt();
        return;
      case 'rotate-log':
        void this.logs.rotate().then(
          () => this.#toAll({ t: 'action', action: { op: 'reopen-log' } }),
          (err: Error) => this.logger.error({ err: err.message }, 'rotating the log failed: %s', err.message),
        );
        return;
    }
  }

  #toAll(message: PrimaryToWorker, except?: number): void {
    for (const [index, worker] of this.#workers) {
      if (index !== except && this.#ready.has(index) && worker.isConnected()) worker.send(message);
    }
  }

  #exited(index: number, worker: Worker, code: number | null, signal: string | null): void {
    if (this.#workers.get(index) !== worker) return;
    this.#workers.delete(index);
    const wasReady = this.#ready.delete(index);
    if (this.#stopping || !this.#started) return;
    const how = signal ? `signal ${signal}` : `exit status ${code}`;
    this.logger.error({ worker: index, code, signal }, 'worker %d died (%s): its sessions end; starting it again', index, how);
    if (wasReady) {
      // Every worker drops its sessions; one (the lowest) tells their contacts they are gone.
      const reaper = Math.min(...this.#ready);
      for (const other of this.#ready) this.#workers.get(other)?.send({ t: 'peer-gone', index, reap: other === reaper } satisfies PrimaryToWorker);
    }
    const now = Date.now();
    this.#crashes.push(now);
    while (this.#crashes.length && this.#crashes[0]! < now - CRASH_WINDOW_MS) this.#crashes.shift();
    if (this.#crashes.length >= MAX_CRASHES) {
      this.logger.fatal({ crashes: this.#crashes.length }, 'workers died %d times within %d s: stopping the server', this.#crashes.length, CRASH_WINDOW_MS / 1000);
      void this.shutdown().then(() => this.onExit(1));
      return;
    }
    setTimeout(() => {
      if (this.#stopping) return;
      this.#fork(index).catch((err: Error) => this.logger.error({ worker: index, err: err.message }, 'worker %d could not start again: %s', index, err.message));
    }, RESTART_DELAY_MS).unref();
  }

  /** Asks every worker to stop gracefully; kills those still running after STOP_TIMEOUT_MS. */
  async #stopAll(): Promise<void> {
    const running = [...this.#workers.values()];
    const exits = running.map((w) => (w.isDead() ? Promise.resolve() : new Promise<void>((resolve) => w.once('exit', () => resolve()))));
    for (const worker of running) {
      if (worker.isConnected()) worker.send({ t: 'shutdown' } satisfies PrimaryToWorker);
      else worker.process.kill('SIGTERM');
    }
    const timer = setTimeout(() => {
      for (const worker of running) if (!worker.isDead()) worker.process.kill('SIGKILL');
    }, STOP_TIMEOUT_MS);
    await Promise.all(exits);
    clearTimeout(timer);
  }

  #halt(): void {
    this.logger.fatal('halt requested: stopping every worker at once with status 1');
    this.#stopping ??= Promise.resolve();
    for (const worker of this.#workers.values()) worker.process.kill('SIGKILL');
    this.logs.logger.flush?.();
    this.onExit(1);
  }
}
