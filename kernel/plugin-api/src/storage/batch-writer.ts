/**
 * Group commit: rows that many callers write one at a time (an archive's messages, the logouts' last activity)
 * share statements. Every row used to be its own statement, one commit each: a chat message with MAM on cost
 * two commits (its sender's row and its recipient's), which is what dominates ejabberd's figures with MAM as
 * well, and with several workers each commit also takes the SQLite file's write lock that they share. The
 * writer queues the rows added during one turn of the event loop and writes them with one statement (the
 * caller's `write`: a multi-row INSERT or upsert, which every database commits atomically); rows added while
 * that statement runs wait for the next one (one statement in flight at a time). Under load, statements also
 * start at least `minIntervalMs` apart: a statement's fixed cost (on SQLite, a commit writing the pages of the
 * table and its indexes, under the write lock) dwarfs a row's, and without the spacing a busy server wrote 1.4
 * archive rows per statement, 800 statements a second per worker (docs/decisions.md, "Archive writes and page
 * queries"). "Under load" means the last statement carried several rows, or several wait: a lone row (a quiet
 * server, or one client sending alone, whose next message waits for this row) is written at the next turn,
 * since waiting would gather nothing.
 *
 * Each row's promise settles when its statement has: a caller that awaits it reads its own write (mod_mam's
 * archiving layers do, so a message is neither delivered nor counted in its sender's stream-management `h`
 * before its row is committed), while the other callers go on. A failed batch is written again row by row,
 * so that one bad row (a value the database refuses) fails alone; each failing row's promise rejects with
 * its own error.
 */

export interface BatchWriterOptions<Row> {
  /** Writes the rows in one statement; resolves once they are committed. */
  readonly write: (rows: readonly Row[]) => Promise<void>;
  /** The most rows one statement carries (the databases cap bound parameters per statement). */
  readonly maxRows: number;
  /** The least time between the starts of two statements, in ms; rows that arrive sooner wait for it. */
  readonly minIntervalMs: number;
}

interface Queued<Row> {
  readonly row: Row;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

export class BatchWriter<Row> {
  #queue: Array<Queued<Row>> = [];
  /** The statement being written, if any; the next batch starts when it settles. */
  #writing: Promise<void> | undefined;
  #scheduled = false;
  /** When the last statement started (performance.now()), and how many rows it carried. */
  #lastStart = -Infinity;
  #lastRows = 0;

  constructor(private readonly options: BatchWriterOptions<Row>) {}

  /** Queues a row; resolves once the statement carrying it has committed, rejects if its write failed. */
  add(row: Row): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ row, resolve, reject });
      this.#schedule();
    });
  }

  /** How many rows wait for a statement (not counting the one being written). */
  get pending(): number {
    return this.#queue.length;
  }

  /** Writes everything queued now and resolves once it is all settled (the module's stop). */
  async flush(): Promise<void> {
    // Without the spacing: a stop or a removal waits for nothing but the writes themselves.
    while (this.#writing || this.#queue.length) {
      if (this.#writing) await this.#writing;
      else this.#startBatch();
    }
  }

  #schedule(): void {
    if (this.#scheduled || this.#writing) return;
    this.#scheduled = true;
    const run = () => {
      this.#scheduled = false;
      if (!this.#writing) this.#startBatch();
    };
    const loaded = this.#lastRows > 1 || this.#queue.length > 1;
    const wait = loaded ? this.#lastStart + this.options.minIntervalMs - performance.now() : 0;
    // setImmediate, not a microtask: the rows that other sockets' data adds during this turn join the batch.
    if (wait <= 0) setImmediate(run);
    else setTimeout(run, Math.ceil(wait));
  }

  #startBatch(): void {
    const batch = this.#queue.splice(0, this.options.maxRows);
    if (!batch.length) return;
    this.#lastStart = performance.now();
    this.#lastRows = batch.length;
    this.#writing = this.#write(batch).finally(() => {
      this.#writing = undefined;
      // What arrived meanwhile goes as soon as the spacing allows.
      if (this.#queue.length) this.#schedule();
    });
  }

  async #write(batch: Array<Queued<Row>>): Promise<void> {
    try {
      await this.options.write(batch.map((q) => q.row));
      for (const q of batch) q.resolve();
      return;
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.reject(err);
        return;
      }
    }
    // One statement failed: each row alone, so that only the rows the database refuses fail.
    for (const q of batch) {
      try {
        await this.options.write([q.row]);
        q.resolve();
      } catch (err) {
        q.reject(err);
      }
    }
  }
}
