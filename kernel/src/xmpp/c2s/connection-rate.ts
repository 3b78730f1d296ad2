/**
 * The listener option `max_connection_rate`: how many new connections one address may open per minute.
 * A token bucket per address (a burst of N, then one more every 60/N seconds), so a client that reconnects
 * now and then never meets it while one that hammers the port is refused at once. Addresses whose bucket
 * is full again are forgotten by a sweep once a minute; an idle listener keeps nothing.
 */

const WINDOW_MS = 60_000;

interface Bucket {
  tokens: number;
  at: number;
}

export class ConnectionRate {
  readonly #buckets = new Map<string, Bucket>();
  #sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly perMinute: number) {}

  /** Counts a new connection from `ip`; false when it is over the limit (and must be refused). */
  admit(ip: string): boolean {
    const limit = this.perMinute;
    if (!Number.isFinite(limit)) return true;
    const now = performance.now();
    let bucket = this.#buckets.get(ip);
    if (!bucket) {
      this.#buckets.set(ip, (bucket = { tokens: limit, at: now }));
      this.#sweeper ??= setInterval(() => this.#sweep(), WINDOW_MS).unref();
    } else {
      bucket.tokens = Math.min(limit, bucket.tokens + ((now - bucket.at) * limit) / WINDOW_MS);
      bucket.at = now;
    }
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Why a connection was refused, for the stream error's text. */
  refusal(): string {
    return `too many connections from your address: at most ${this.perMinute} a minute (max_connection_rate)`;
  }

  close(): void {
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    this.#buckets.clear();
  }

  #sweep(): void {
    const now = performance.now();
    for (const [ip, bucket] of this.#buckets) if (now - bucket.at >= WINDOW_MS) this.#buckets.delete(ip);
    if (this.#buckets.size === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}
