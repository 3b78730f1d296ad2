/**
 * Quiet connections let their stream parser go. An idle session's parser (saxes, our framing state and
 * the UTF-8 decoder) is about 4 KiB, the largest part of what an idle session costs; most sessions are idle
 * most of the time. Every SWEEP_MS the connections watched here are asked whether anything arrived since
 * the last sweep; one that heard nothing drops its parser if it stands between two stanzas, and builds a
 * continued one when bytes come again (TcpTransport). One timer for the process, not one per connection.
 */

/** What a sweep asks of a connection. */
export interface QuietCandidate {
  /** Whether the connection heard anything since the last sweep (and forget that it did). */
  heardSinceLastSweep(): boolean;
  /** Drops the parser if it can be dropped without losing input; whether it did (then it is unwatched). */
  releaseParser(): boolean;
}

/**
 * A connection silent for 5–10 s sheds its parser. The price is one parser built (about 11 µs) for the next
 * stanza after such a silence; a session that sends more often keeps its parser, and one that sends less
 * often pays 11 µs on a stanza whose handling costs several times that anyway.
 */
export const SWEEP_MS = 5_000;

export class QuietParsers {
  readonly #watched = new Set<QuietCandidate>();
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly sweepMs = SWEEP_MS) {}

  watch(candidate: QuietCandidate): void {
    this.#watched.add(candidate);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.sweep(), this.sweepMs);
      this.#timer.unref();
    }
  }

  unwatch(candidate: QuietCandidate): void {
    this.#watched.delete(candidate);
    if (this.#watched.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /** How many connections still hold a parser. */
  get watching(): number {
    return this.#watched.size;
  }

  sweep(): void {
    for (const candidate of this.#watched) {
      if (!candidate.heardSinceLastSweep() && candidate.releaseParser()) this.unwatch(candidate);
    }
  }
}

/** The process's sweeper, shared by every TCP client connection. */
export const quietParsers = new QuietParsers();
