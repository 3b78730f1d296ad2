/**
 * Long purges in batches (delete_old_messages_batch, and the archive's and others' to come): one job per
 * key (the kind of data and the host), each step deleting at most `batchSize` rows in its own short
 * statement, paced to `rate` rows per minute, stoppable between two steps. A second start while a job of
 * the key runs is refused. The status says what the job has done, in ejabberd's words, so that operators'
 * scripts read the same texts. The event loop is never held: each step is one awaited statement, and the
 * pauses are timers.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log/logger.js';

export type BatchJobState = 'not_started' | 'working' | 'completed' | 'aborted' | 'failed';

export interface BatchJobStatus {
  readonly state: BatchJobState;
  /** Rows deleted so far. */
  readonly done: number;
  /** Why it failed. */
  readonly error?: string;
}

export interface BatchJobOptions {
  /** Rows per step (> 0). */
  readonly batchSize: number;
  /** Rows per minute at most (> 0). */
  readonly rate: number;
  /** One step: deletes at most `limit` rows and says how many went. */
  readonly step: (limit: number) => Promise<number>;
  /** What the log lines call the job ("offline messages of example.org older than 30 days"). */
  readonly what: string;
}

interface Job {
  state: BatchJobState;
  done: number;
  error?: string;
  readonly controller: AbortController;
}

export class BatchJobs {
  readonly #jobs = new Map<string, Job>();

  constructor(private readonly logger: Logger) {}

  /** Starts the job of `key`; false when one runs already (nothing is started then). */
  start(key: string, options: BatchJobOptions): boolean {
    if (!(options.batchSize > 0) || !(options.rate > 0)) throw new RangeError('batchSize and rate must be positive');
    if (this.#jobs.get(key)?.state === 'working') return false;
    const job: Job = { state: 'working', done: 0, controller: new AbortController() };
    this.#jobs.set(key, job);
    this.logger.notice({ job: key, batchSize: options.batchSize, rate: options.rate }, 'purge of %s started', options.what);
    void this.#run(job, key, options);
    return true;
  }

  status(key: string): BatchJobStatus {
    const job = this.#jobs.get(key);
    return job ? { state: job.state, done: job.done, ...(job.error ? { error: job.error } : {}) } : { state: 'not_started', done: 0 };
  }

  /** Stops the running job of `key` after its current step; false when none runs. */
  abort(key: string): boolean {
    const job = this.#jobs.get(key);
    if (job?.state !== 'working') return false;
    job.state = 'aborted';
    job.controller.abort();
    return true;
  }

  /** Stops every running job (the module that owns them stops). */
  abortAll(): void {
    for (const key of this.#jobs.keys()) this.abort(key);
  }

  async #run(job: Job, key: string, options: BatchJobOptions): Promise<void> {
    const started = Date.now();
    const signal = job.controller.signal;
    try {
      for (;;) {
        const count = await options.step(options.batchSize);
        job.done += count;
        if (signal.aborted) break;
        if (count < options.batchSize) {
          job.state = 'completed';
          break;
        }
        // Hold the pace: `done` rows may take done/rate minutes since the start.
        const wait = (job.done / options.rate) * 60_000 - (Date.now() - started);
        if (wait > 0) await sleep(wait, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) break;
      }
    } catch (err) {
      job.state = 'failed';
      job.error = err instanceof Error ? err.message : String(err);
    }
    const level = job.state === 'failed' ? 'error' : 'notice';
    this.logger[level]({ job: key, deleted: job.done, state: job.state, ...(job.error ? { err: job.error } : {}) }, 'purge of %s %s after deleting %d rows', options.what, job.state, job.done);
  }
}

/** ejabberd's text for a job's status (its `*_status` commands), counting `unit` (messages). */
export function batchStatusText(status: BatchJobStatus, unit = 'messages'): string {
  switch (status.state) {
    case 'not_started':
      return 'Operation not started';
    case 'working':
      return `Operation in progress, deleted ${status.done} ${unit}`;
    case 'completed':
      return `Operation was completed after deleting ${status.done} ${unit}`;
    case 'aborted':
      return `Operation was aborted after deleting ${status.done} ${unit}`;
    case 'failed':
      return `Operation failed after deleting ${status.done} ${unit} with error ${status.error ?? 'unknown'}`;
  }
}
