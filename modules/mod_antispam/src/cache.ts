/**
 * The spam filter cache of one virtual host: senders caught sending spam (bare JID → when last seen, in
 * Unix seconds), whose next stanzas are refused at once. Bounded as ejabberd bounds it: when it is full, the
 * half seen least recently is forgotten; a size of 0 keeps nothing. A hit refreshes the entry's time.
 */
export interface CacheEntry {
  readonly jid: string;
  readonly timestamp: number;
}

export class SpamCache {
  readonly #entries = new Map<string, number>();

  constructor(private max: number) {}

  resize(max: number): void {
    this.max = max;
    if (this.#entries.size > max) this.#shrink();
  }

  has(jid: string): boolean {
    return this.#entries.has(jid);
  }

  /** A cached sender was seen again: its time is now. */
  touch(jid: string, now: number): void {
    if (this.#entries.has(jid)) this.#entries.set(jid, Math.max(now, this.#entries.get(jid)!));
  }

  /** Adds or refreshes; false when the cache is off (size 0). */
  add(jid: string, timestamp: number): boolean {
    if (this.max <= 0) return false;
    if (!this.#entries.has(jid) && this.#entries.size >= this.max) this.#shrink();
    this.#entries.set(jid, Math.max(timestamp, this.#entries.get(jid) ?? 0));
    return true;
  }

  drop(jid: string): boolean {
    return this.#entries.delete(jid);
  }

  /** Forgets the entries not seen for `seconds`; returns how many. */
  expire(seconds: number, now: number): number {
    const threshold = now - seconds;
    let expired = 0;
    for (const [jid, seen] of this.#entries) {
      if (seen < threshold) {
        this.#entries.delete(jid);
        expired++;
      }
    }
    return expired;
  }

  entries(): CacheEntry[] {
    return [...this.#entries].map(([jid, timestamp]) => ({ jid, timestamp })).sort((a, b) => (a.jid < b.jid ? -1 : a.jid > b.jid ? 1 : 0));
  }

  /** Keeps the most recently seen half of the maximum. */
  #shrink(): void {
    const keep = Number.isFinite(this.max) ? Math.floor(this.max / 2) : this.#entries.size;
    const newest = [...this.#entries].sort((a, b) => b[1] - a[1]).slice(0, keep);
    this.#entries.clear();
    for (const [jid, seen] of newest) this.#entries.set(jid, seen);
  }
}
