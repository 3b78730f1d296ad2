/**
 * How servicectl starts the server: as one process (`workers: 1`, the default), as the primary of several
 * workers (it reads the configuration, forks them and supervises), or, in a process the primary forked, as
 * one of those workers.
 */
import cluster from 'node:cluster';
import { mkdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { LogService } from '../log/log-service.js';
import type { Logger } from '../log/logger.js';
import type { ServerOptions } from '../server.js';
import { parseWorkers, workerCount, type WorkersSetting } from './count.js';
import { readPrimarySettings, type PrimarySettings } from './primary-config.js';
import { WORKER_ALONE_ENV, WORKER_COUNT_ENV, WORKER_INDEX_ENV, WorkerSupervisor } from './supervisor.js';
import type { WorkerIdentity } from './worker-link.js';

/** What servicectl's foreground holds while the server runs, whichever way it runs. */
export interface RunningService {
  readonly logger: Logger;
  readonly dataDir: string;
  shutdown(): Promise<void>;
}

/** This process's worker, when the primary forked it as one. */
export function workerIdentity(): WorkerIdentity | undefined {
  if (!cluster.isWorker) return undefined;
  const index = Number(process.env[WORKER_INDEX_ENV]);
  const count = Number(process.env[WORKER_COUNT_ENV]);
  return Number.isInteger(index) && index >= 1 && Number.isInteger(count) ? { index, count, alone: process.env[WORKER_ALONE_ENV] === '1' } : undefined;
}

export async function startService(options: ServerOptions & { readonly onExit: (status: number) => void }): Promise<RunningService> {
  const worker = workerIdentity();
  if (worker) return runHere({ ...options, worker });
  const asked = await workersInFile(options.configFile);
  // One process, or a file that cannot say how many: the start validates the file first and reports what is wrong.
  if (asked === undefined || workerCount(asked) === 1) return runHere(options);
  const settings = await readPrimarySettings(options.configFile);
  const count = workerCount(settings.workers);
  // As the server does before its log opens there: the data directory holds the database and the sockets.
  await mkdir(settings.dataDir, { recursive: true, mode: 0o700 });
  const logs = primaryLog(settings, options);
  const supervisor = await WorkerSupervisor.start(count, logs, options.onExit);
  return { logger: supervisor.logger, dataDir: settings.dataDir, shutdown: () => supervisor.shutdown() };
}

/**
 * The file's `workers` as written, to choose how to start before validating everything: one process (the
 * default) validates as it starts, the primary of several in a thread of its own that ends. Undefined when the
 * file cannot say (unreadable, not YAML, a value out of range): the full validation reports what is wrong.
 */
async function workersInFile(file: string): Promise<WorkersSetting | undefined> {
  try {
    const raw: unknown = parse(await readFile(file, 'utf8'), { maxAliasCount: 100 });
    const value = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>).workers : undefined;
    return value === undefined ? 1 : parseWorkers(value, ['workers']);
  } catch {
    return undefined;
  }
}

/** The server in this process (one process, or a worker): its code is loaded where it runs, never in the primary. */
async function runHere(options: ServerOptions): Promise<RunningService> {
  const { Server } = await import('../server.js');
  const server = await Server.start(options);
  return { logger: server.logger, dataDir: server.config.dataDir, shutdown: () => server.shutdown() };
}

/** The primary's log: the configured file (the workers append to it too), which the primary alone rotates by size. */
function primaryLog(config: PrimarySettings, options: ServerOptions): LogService {
  if (options.logger) return LogService.external(options.logger, config.loglevel);
  return new LogService({
    level: config.loglevel,
    rotateCount: config.log_rotate_count,
    rotateSize: config.log_rotate_size,
    file: config.log_file ? resolve(config.dataDir, config.log_file) : undefined,
    stdout: options.stdout ?? false,
    pretty: options.pretty ?? false,
  });
}
