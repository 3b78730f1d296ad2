/**
 * The failed-login limit of every way in: XMPP SASL, HTTP Basic on /api and XML-RPC, the OAuth password grant
 * and authorization form. One instance per server, so a guesser cannot switch doors to get more tries.
 *
 * Two levels, both keyed by the peer address, never by the account alone:
 * - one account from one address (the kernel's own guard, always on): after `perAccount` failures that
 *   address may not log in to that account for `banSeconds`; this stops guessing one password;
 * - one address, any accounts (address bans, ejabberd's mod_fail2ban): after `maxFailures` failures the
 *   address may not log in at all; this stops credential stuffing (many accounts, a few passwords each).
 *   This level is a module's policy: mod_fail2ban sets it while it runs (setAddressBans, the plugin API's
 *   LoginLimitsApi). Without it there are no address bans, unless the deprecated top-level option
 *   login_failures_per_address is set (`perAddress`, lasting `banSeconds`), which old configurations relied on.
 * A ban lasts its lifetime from the failure that caused it; failures are counted over the same span from the
 * first one. The owner of an attacked account logs in from any other address as usual: a lockout here is
 * never a denial of service against the account itself.
 *
 * Refusals come before any password is checked, so a banned guesser learns nothing. A success clears the
 * account's count at that address but not the address's own count: knowing one password buys no more guesses
 * at the others.
 */
import { addressInRange, type AddressBan, type AddressBanSettings, type AddressRange, type LoginLimitsApi, type LoginWay } from '@service/plugin-api';
import type { Logger } from '../log/logger.js';

export interface LoginThrottleSettings {
  readonly perAccount: number;
  /**
   * Address bans from the deprecated top-level login_failures_per_address (undefined when not set); a module's
   * setAddressBans takes precedence.
   */
  readonly perAddress?: number;
  /** Seconds an account-at-an-address ban lasts (and an address ban from `perAddress`). */
  readonly banSeconds: number;
  /** Addresses that are never limited (login_ban_exempt). */
  exempt(ip: string): boolean;
}

export type { LoginWay } from '@service/plugin-api';

export interface LoginRefusal {
  /**
   * `banned`: the address is banned by the module that bans addresses (mod_fail2ban): HTTP answers 403
   * Forbidden. `limited`: one of the kernel's own limits (an account at an address, or the deprecated
   * login_failures_per_address): HTTP answers 429 Too Many Requests, as it always has.
   */
  readonly kind: 'banned' | 'limited';
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
  | { readonly outcome: 'succeeded'; readonly ip: string; readonly account: string }
  | { readonly outcome: 'unbanned'; readonly range: AddressRange }
  | { readonly outcome: 'banned'; readonly ip: string; readonly seconds: number };

export class LoginThrottle implements LoginLimitsApi {
  readonly #addresses = new Map<string, Counter>();
  readonly #pairs = new Map<string, Counter>();
  /** Told of each login counted here (the workers' link), so that a ban holds on every way in of every worker. */
  #observer?: (event: LoginEvent) => void;
  /** Address bans as a module (mod_fail2ban) set them; undefined: the deprecated top-level option, if any. */
  #addressBans?: AddressBanSettings;
  /** Told of each address ban this process starts (a module carrying bans to the other nodes). */
  readonly #banListeners = new Set<(ban: AddressBan) => void>();

  constructor(
    private readonly settings: () => LoginThrottleSettings,
    private readonly logger: Logger,
  ) {}

  /**
   * Why a login from `ip` (to `account`, `user@host`, when known) is refused now, or undefined when it may
   * go ahead. Without an account only the address's ban applies.
   */
  refusal(ip: string, account?: string, now = Date.now()): LoginRefusal | undefined {
    // Asked on every request with a password: the bans are looked up first, the settings only when one runs.
    const addressBan = this.#banned(this.#addresses, ip, now);
    const pairBan = account === undefined || this.#pairs.size === 0 ? 0 : this.#banned(this.#pairs, pairKey(ip, account), now);
    if (!addressBan && !pairBan) return undefined;
    const settings = this.settings();
    if (settings.exempt(ip)) return undefined;
    if (addressBan && this.#addressSettings(settings)) {
      const kind = this.#addressBans ? 'banned' : 'limited';
      return { kind, retryAfter: addressBan, message: `too many failed logins from ${ip}: logins from this address are refused for ${addressBan} more seconds` };
    }
    if (pairBan) return { kind: 'limited', retryAfter: pairBan, message: `too many failed logins to ${account} from ${ip}: try again in ${pairBan} seconds` };
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
    else if (event.outcome === 'unbanned') this.unban((ip) => addressInRange(ip, event.range));
    else if (event.outcome === 'banned') this.#ban(event.ip, event.seconds, now);
    else this.#countFailures(this.settings(), event.ip, event.account, event.way, event.count, now, false);
  }

  setAddressBans(settings: AddressBanSettings | undefined): void {
    this.#addressBans = settings;
  }

  /**
   * Lifts the bans and counts of the addresses in `range` (and of the accounts at them) here and, through the
   * observer, in the other workers; returns how many addresses had live counts or bans here, as ejabberd's
   * unban_ip counts the entries it removes.
   */
  unbanAddresses(range: AddressRange, now = Date.now()): number {
    const matches = (ip: string) => addressInRange(ip, range);
    let removed = 0;
    for (const [ip, counter] of this.#addresses) if (matches(ip) && (counter.countUntil > now || counter.bannedUntil > now)) removed++;
    this.unban(matches);
    this.#observer?.({ outcome: 'unbanned', range });
    return removed;
  }

  onAddressBanned(listener: (ban: AddressBan) => void): () => void {
    this.#banListeners.add(listener);
    return () => this.#banListeners.delete(listener);
  }

  imposeAddressBan(ban: AddressBan, now = Date.now()): void {
    if (ban.secondsLeft <= 0 || this.settings().exempt(ban.address)) return;
    this.#ban(ban.address, ban.secondsLeft, now);
    this.#observer?.({ outcome: 'banned', ip: ban.address, seconds: ban.secondsLeft });
  }

  /** Bans `ip` for `seconds` from `now`, unless it is banned longer already. */
  #ban(ip: string, seconds: number, now: number): void {
    const until = now + seconds * 1000;
    const counter = this.#addresses.get(ip);
    if (!counter) {
      this.#addresses.set(ip, { failures: 0, countUntil: until, bannedUntil: until });
      if (this.#addresses.size > MAX_COUNTERS) prune(this.#addresses, now);
    } else if (counter.bannedUntil < until) {
      counter.bannedUntil = until;
      counter.countUntil = Math.max(counter.countUntil, until);
    }
  }

  addressBans(now = Date.now()): AddressBan[] {
    if (!this.#addressSettings(this.settings())) return [];
    const bans: AddressBan[] = [];
    for (const [address, counter] of this.#addresses) {
      if (counter.bannedUntil > now) bans.push({ address, secondsLeft: Math.ceil((counter.bannedUntil - now) / 1000) });
    }
    return bans.sort((a, b) => a.secondsLeft - b.secondsLeft);
  }

  /** The address-ban limit in force: the module's, else the deprecated top-level option's, else none. */
  #addressSettings(settings: LoginThrottleSettings): AddressBanSettings | undefined {
    if (this.#addressBans) return this.#addressBans;
    return settings.perAddress === undefined ? undefined : { maxFailures: settings.perAddress, banSeconds: settings.banSeconds };
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
    const address = this.#addressSettings(settings);
    if (address && this.#count(this.#addresses, ip, count, address.maxFailures, address.banSeconds * 1000, now) && log) {
      this.logger.warn({ ip, way, failures: address.maxFailures, seconds: address.banSeconds }, 'login ban: %s may not log in for %d seconds after %d failed logins', ip, address.banSeconds, address.maxFailures);
      for (const listener of this.#banListeners) listener({ address: ip, secondsLeft: address.banSeconds });
    }
  }

  /** A login from `ip` to `account` succeeded: that account's count at this address starts again. */
  succeeded(ip: string, account: string): void {
    if (this.#pairs.size !== 0 && this.#pairs.delete(pairKey(ip, account))) this.#observer?.({ outcome: 'succeeded', ip, account });
  }

  /**
   * Lifts the bans and counts of addresses matching `matches` (all when undefined), here only; returns how
   * many addresses were banned.
   */
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
