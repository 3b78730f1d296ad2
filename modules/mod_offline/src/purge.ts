/**
 * The batched purge of old messages of one host (for delete_old_messages_batch, with the status and abort
 * commands around it): batches of `batchSize`, no faster than `rate` messages per minute, stoppable.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { OfflineStore } from './store.js';

export interface BatchPurgeOptions {
  readonly host: string;
  /** Messages stored before this time (ms since the epoch) go. */
  readonly before: number;
  /** Messages per batch (> 0). */
  readonly batchSize: number;
  /** Messages per minute at most (> 0). */
  readonly rate: number;
  /** Aborting stops between batches; what was deleted stays deleted. */
  readonly signal?: AbortSignal;
  /** After each batch, with the total so far. */
  readonly onProgress?: (deleted: number) => void;
}

export interface BatchPurgeResult {
  readonly deleted: number;
  readonly aborted: boolean;
}

export async function purgeInBatches(store: OfflineStore, options: BatchPurgeOptions): Promise<BatchPurgeResult> {
  const { host, before, batchSize, rate, signal, onProgress } = options;
  if (!(batchSize > 0) || !(rate > 0)) throw new RangeError('batchSize and rate must be positive');
  let deleted = 0;
  for (;;) {
    if (signal?.aborted) return { deleted, aborted: true };
    const started = Date.now();
    const count = await store.deleteOldestBatch(host, before, batchSize);
    deleted += count;
    onProgress?.(deleted);
    if (count < batchSize) return { deleted, aborted: false };
    // Hold the pace: `count` messages may take count/rate minutes.
    const wait = (count / rate) * 60_000 - (Date.now() - started);
    if (wait > 0) {
      try {
        await sleep(wait, undefined, { signal });
      } catch {
        return { deleted, aborted: true };
      }
    }
  }
}
