/**
 * The `workers` option: how many processes serve this machine's share of the server. A number, or `auto`
 * for one per core (os.availableParallelism, which follows CPU affinity and cgroup limits where Node can
 * see them). The cap keeps a typo from forking hundreds of processes.
 */
import { availableParallelism } from 'node:os';
import { OptionIssues, type OptionPath } from '../config/option-spec.js';

export const MAX_WORKERS = 64;

/** What the option holds once validated: a count, or `auto`. */
export type WorkersSetting = number | 'auto';

export function parseWorkers(raw: unknown, path: OptionPath): WorkersSetting {
  if (raw === 'auto') return 'auto';
  const n = typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_WORKERS) {
    throw OptionIssues.one(path, `expected a number of worker processes from 1 to ${MAX_WORKERS}, or 'auto' (one per core), got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** The number of worker processes a setting means on this machine. */
export function workerCount(setting: WorkersSetting): number {
  return setting === 'auto' ? Math.min(MAX_WORKERS, availableParallelism()) : setting;
}
