/**
 * The failed-login limit of every way in: XMPP SASL, HTTP Basic on /api and XML-RPC, the OAuth password grant
 * and authorization form. One instance per server, so a guesser cannot switch doors to get more tries.
 *
 * Two levels, both keyed by the peer address, never by the account alone:
 * - one account from one address: after `perAccount` failures that address may not log in to that account;
 *   this stops guessing one password;
 * - one address, any accounts: after `perAddress` failures the address may not log in at all; this stops
 *   credential stuffing (many accounts, a few passwords each), like ejabberd's mod_fail2ban.
 * A ban lasts `banSeconds` from the failure that caused it; failures are counted over the same span from the
 * first one. The owner of an attacked account logs in from any other address as usual: a lockout here is
 * never a denial of service against the account itself.
 *
 * Refusals come before any password is checked, so a banned guesser learns nothing. A success clears the
 * account's count at that address but not the address's own count: knowing one password buys no more guesses
 * at the others.
 */
import type { LoginWay } from '@service/plugin-api';
import type { Logger } from '../log/logger.js';

export interface LoginThrottleSettings {
  readonly perAccount: number;
  readonly perAddress: number;
  /** Seconds. */
  readonly banSeconds: number;
  /** Addresses that are never limited (login_ban_exempt). */
  exempt(ip: string): boolean;
}

export type { LoginWay } from '@service/plugin-api';

export interface LoginRefusal {
  /** Seconds until the ban ends. */
  readonly retryAfter: number;
  readonly message: string;
}

interface Counter {
  failures: number;
  /** End of the span failures are counted over. */
  countUntil: number;
  /** End of the ban; 0 when not banned. */
  bannedUntil: number;
}

/** Counters kept at most, per level; beyond that the stale ones go, then the oldest. */
const MAX_COUNTERS = 100_000;

/** The running counts of a LoginThrottle, as they travel to another process. */
export interface LoginCounters {
  readonly addresses: ReadonlyArray<readonly [string, Counter]>;
  readonly pairs: ReadonlyArray<readonly [string, Counter]>;
}

/** A failed or successful login, as other processes of the server (workers) count it too. */
export type LoginEvent =
  | { readonly outcome: 'failed'; readonly ip: string; readonly account?: string; readonly way: LoginWay; readonly count: number }
  | { readonly outcome: 'succeeded'; readonly ip: string; readonly account: string };

export class LoginThrottle {
  readonly #addresses = new Map<string, Counter>();
  readonly #pairs = new Map<string, Counter>();
  /** Told of each login counted here (the workers' link), so that a ban holds on every way in of every worker. */
  #observer?: (event: LoginEvent) => void;

  constructor(
    private readonly settings: () => LoginThrottleSettings,
    private readonly logger: Logger,
  ) {}

  /**
   * Why a login from `ip` (to `account`, `user@host`, when known) is refused now, or undefined when it may
   * go ahead. Without an account only the address's ban applies.
   */
  refusal(ip: string, account?: string, now = Date.now()): LoginRefusal | undefined {
    const settings = this.settings();
    if (settings.exempt(ip)) return undefined;
    const address = this.#banned(this.#addresses, ip, now);
    if (address) {
      return { retryAfter: address, message: `too many failed logins from ${ip}: logins from this address are refused for ${address} more seconds` };
    }
    if (account === undefined) return undefined;
    const pair = this.#banned(this.#pairs, pairKey(ip, account), now);
    if (pair) return { retryAfter: pair, message: `too many failed logins to ${account} from ${ip}: try again in ${pair} seconds` };
    return undefined;
  }

  /** Records `count` failed logins from `ip` to `account` (undefined when the attempt named none). */
  failed(ip: string, account: string | undefined, way: LoginWay, count = 1, now = Date.now()): void {
    if (count <= 0) return;
    const settings = this.settings();
    if (settings.exempt(ip)) return;
    this.#observer?.({ outcome: 'failed', ip, ...(account === undefined ? {} : { account }), way, count });
    this.#countFailures(settings, ip, account, way, count, now, true);
  }

  /** Watches the logins counted here (one observer: the workers' link); undefined stops. */
  observe(observer: ((event: LoginEvent) => void) | undefined): void {
    this.#observer = observer;
  }

  /** Counts a login another process of the server saw. */
  apply(event: LoginEvent, now = Date.now()): void {
    if (event.outcome === 'succeeded') this.#pairs.delete(pairKey(event.ip, event.account));
    else this.#countFailures(this.settings(), event.ip, event.account, event.way, event.count, now, false);
  }

  /**
   * The counts and bans that still run, for a process of the server that (re)starts (another worker): it
   * merges them (merge), so that a ban holds there too.
   */
  snapshot(now = Date.now()): LoginCounters {
    const live = (counters: Map<string, Counter>) => [...counters].filter(([, c]) => c.countUntil > now || c.bannedUntil > now);
    return { addresses: live(this.#addresses), pairs: live(this.#pairs) };
  }

  /** Takes in another process's counts: the larger count and the later ban of each key win. */
  merge(counters: LoginCounters): void {
    const into = (target: Map<string, Counter>, entries: ReadonlyArray<readonly [string, Counter]>) => {
      for (const [key, theirs] of entries) {
        const mine = target.get(key);
        if (!mine) target.set(key, { ...theirs });
        else {
          mine.failures = Math.max(mine.failures, theirs.failures);
          mine.countUntil = Math.max(mine.countUntil, theirs.countUntil);
          mine.bannedUntil = Math.max(mine.bannedUntil, theirs.bannedUntil);
        }
      }
    };
    into(this.#addresses, counters.addresses);
    into(this.#pairs, counters.pairs);
  }

  /** `log`: the ban a count starts is logged (by the process that saw the login, once). */
  #countFailures(settings: LoginThrottleSettings, ip: string, account: string | undefined, way: LoginWay, count: number, now: number, log: boolean): void {
    const span = settings.banSeconds * 1000;
    if (account !== undefined && this.#count(this.#pairs, pairKey(ip, account), count, settings.perAccount, span, now) && log) {
      this.logger.warn({ ip, account, way, failures: settings.perAccount, seconds: settings.banSeconds }, 'login ban: %s may not log in to %s for %d seconds after %d failed logins', ip, account, settings.banSeconds, settings.perAccount);
    }
    if (this.#count(this.#addresses, ip, count, settings.perAddress, span, now) && log) {
      this.logger.warn({ ip, way, failures: settings.perAddress, seconds: settings.banSeconds }, 'login ban: %s may not log in for %d seconds after %d failed logins', ip, settings.banSeconds, settings.perAddress);
    }
  }

  /** A login from `ip` to `account` succeeded: that account's count at this address starts again. */
  succeeded(ip: string, account: string): void {
    if (this.#pairs.delete(pairKey(ip, account))) this.#observer?.({ outcome: 'succeeded', ip, account });
  }

  /** Lifts the bans and counts of addresses matching `matches` (all when undefined); returns how many. */
  unban(matches?: (ip: string) => boolean): number {
    let lifted = 0;
    for (const ip of [...this.#addresses.keys()]) {
      if (matches && !matches(ip)) continue;
      if (this.#addresses.get(ip)!.bannedUntil > 0) lifted++;
      this.#addresses.delete(ip);
    }
    for (const key of [...this.#pairs.keys()]) if (!matches || matches(key.slice(0, key.indexOf(' ')))) this.#pairs.delete(key);
    return lifted;
  }

  /** Seconds left of a ban on `key`, or 0. */
  #banned(counters: Map<string, Counter>, key: string, now: number): number {
    const counter = counters.get(key);
    if (!counter || counter.bannedUntil <= now) return 0;
    return Math.ceil((counter.bannedUntil - now) / 1000);
  }

  /** Adds failures; true when they start a ban. */
  #count(counters: Map<string, Counter>, key: string, count: number, max: number, span: number, now: number): boolean {
    let counter = counters.get(key);
    if (!counter || (counter.countUntil <= now && counter.bannedUntil <= now)) {
      counter = { failures: 0, countUntil: now + span, bannedUntil: 0 };
      counters.set(key, counter);
      if (counters.size > MAX_COUNTERS) prune(counters, now);
    }
    if (counter.bannedUntil > now) return false;
    counter.failures += count;
    if (counter.failures < max) return false;
    counter.bannedUntil = now + span;
    counter.countUntil = counter.bannedUntil;
    return true;
  }
}

function pairKey(ip: string, account: string): string {
  return `${ip} ${account}`;
}

function prune(counters: Map<string, Counter>, now: number): void {
  for (const [key, counter] of counters) if (counter.countUntil <= now && counter.bannedUntil <= now) counters.delete(key);
  for (const key of counters.keys()) {
    if (counters.size <= MAX_COUNTERS / 2) break;
    counters.delete(key);
  }
}
