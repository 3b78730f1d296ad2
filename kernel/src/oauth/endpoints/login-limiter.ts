/**
 * Failed-login limits of the OAuth endpoints (the authorization form and the password grant), per peer
 * address and per account: after `max` failures within `window` seconds, further attempts from that address
 * or on that account are refused until the window ends, without checking the password (so guessing gets no
 * answer). A success does not reset the address's count: a guesser who knows one password gains nothing.
 */
export interface LoginLimits {
  readonly perIp: number;
  readonly perAccount: number;
  /** Seconds. */
  readonly window: number;
}

interface Counter {
  count: number;
  resetAt: number;
}

/** Counters kept at most; beyond that the expired ones are dropped, then the oldest. */
const MAX_COUNTERS = 100_000;

export class LoginLimiter {
  readonly #counters = new Map<string, Counter>();

  constructor(private readonly limits: () => LoginLimits) {}

  /** Seconds until attempts are allowed again, or 0 when the address and the account may try now. */
  blockedFor(ip: string, account: string | undefined, now = Date.now()): number {
    const { perIp, perAccount } = this.limits();
    const wait = (key: string, max: number) => {
      const counter = this.#counters.get(key);
      if (!counter || counter.resetAt <= now || counter.count < max) return 0;
      return Math.ceil((counter.resetAt - now) / 1000);
    };
    return Math.max(wait(`ip:${ip}`, perIp), account ? wait(`account:${account}`, perAccount) : 0);
  }

  failed(ip: string, account: string | undefined, now = Date.now()): void {
    this.#bump(`ip:${ip}`, now);
    if (account) this.#bump(`account:${account}`, now);
  }

  succeeded(account: string): void {
    this.#counters.delete(`account:${account}`);
  }

  #bump(key: string, now: number): void {
    const counter = this.#counters.get(key);
    if (counter && counter.resetAt > now) {
      counter.count += 1;
      return;
    }
    this.#counters.set(key, { count: 1, resetAt: now + this.limits().window * 1000 });
    if (this.#counters.size > MAX_COUNTERS) this.#prune(now);
  }

  #prune(now: number): void {
    for (const [key, counter] of this.#counters) if (counter.resetAt <= now) this.#counters.delete(key);
    for (const key of this.#counters.keys()) {
      if (this.#counters.size <= MAX_COUNTERS / 2) break;
      this.#counters.delete(key);
    }
  }
}
