/**
 * Where a ban lives: one element in the account's private storage (mod_private), as ejabberd 25.08 keeps
 * it, so it stays with the account and goes when the account is removed:
 *
 *   <banned xmlns='jabber:service:banned'>
 *     <reason>…</reason><bandate>…</bandate><lastdate>…</lastdate><lastreason>…</lastreason>
 *   </banned>
 *
 * The namespace is claimed from mod_private: the account cannot read or write it (its clients, private_get
 * and private_set are refused), so nobody lifts a ban by editing their own private storage.
 *
 * Every login (XMPP, HTTP Basic on every request) asks whether the account is banned, so that is answered from
 * memory: the set of banned accounts, read once (one query) and again every CACHE_TTL_MS, and each ban's
 * details for CACHE_TTL_MS. Only these records change a ban; they update both at once, and tell the other
 * workers and nodes (BANS_CACHE), where the account is then read from storage at its next check. Bans
 * changed outside them (a restore) are seen after clear_cache, or within CACHE_TTL_MS.
 */
import { x, type AccountKey, type CachesApi, type XmlElement } from '@service/plugin-api';
import type { ClaimedNamespace } from '@service/mod_private/api';

export const NS_BANNED = 'jabber:service:banned';

/** The spec's Ban details, in its order. */
export const BAN_FIELDS = ['reason', 'bandate', 'lastdate', 'lastreason'] as const;

export type BanDetails = Readonly<Record<(typeof BAN_FIELDS)[number], string>>;

const CACHE_TTL_MS = 30_000;
const CACHE_SIZE = 10_000;

/** The ban cache's name among the shared caches (a ban on one node holds on every node at once). */
export const BANS_CACHE = 'bans';

export class BanRecords {
  /** Account → its ban or undefined, and until when that answer holds; Map order is age order. */
  readonly #cache = new Map<string, { ban: BanDetails | undefined; until: number }>();
  /** The banned accounts, once read; undefined until then (every check reads storage meanwhile). */
  #banned: Set<string> | undefined;
  /** When #banned was read; a check after CACHE_TTL_MS reads it again in the background. */
  #bannedAt = 0;
  /** Accounts whose ban changed since #banned was read, here or elsewhere: read from storage at their next check. */
  readonly #unsure = new Set<string>();
  /** Moves on with every change: a read of the set that began before one is not used. */
  #changes = 0;
  #loading: Promise<void> | undefined;
  /** Leaves the shared caches (when mod_admin_extra stops). */
  readonly leave: () => void;

  /** Without mod_private there is no storage (and no ban can be read or written). */
  constructor(
    private readonly storage: ClaimedNamespace | undefined,
    private readonly caches: CachesApi,
  ) {
    this.leave = caches.register(BANS_CACHE, (k) => (k === undefined ? this.dropAll() : this.#changed(k)));
    void this.#loadBanned();
  }

  /** Forgets everything read (clear_cache, a restore): the next checks read storage until the set is read again. */
  dropAll(): void {
    this.#cache.clear();
    this.#banned = undefined;
    this.#unsure.clear();
    this.#changes++;
    void this.#loadBanned();
  }

  #changed(k: string): void {
    this.#cache.delete(k);
    this.#unsure.add(k);
    this.#changes++;
  }

  #loadBanned(): Promise<void> {
    const storage = this.storage;
    if (!storage) return Promise.resolve();
    this.#loading ??= (async () => {
      try {
        for (;;) {
          const changes = this.#changes;
          const accounts = await storage.accounts();
          // A ban written or lifted meanwhile may be missing from what was read: read again.
          if (changes !== this.#changes) continue;
          this.#banned = new Set(accounts.map(key));
          this.#bannedAt = Date.now();
          this.#unsure.clear();
          return;
        }
      } catch {
        // Checks keep reading storage; the next check past CACHE_TTL_MS tries again.
        this.#bannedAt = Date.now();
      } finally {
        this.#loading = undefined;
      }
    })();
    return this.#loading;
  }

  /** The ban as stored now; none while mod_private is not enabled (nothing can be read then). */
  async read(account: AccountKey): Promise<BanDetails | undefined> {
    const changes = this.#changes;
    const element = this.storage ? await this.storage.get(account.user, account.host) : undefined;
    const ban = element && parse(element);
    // A change that came meanwhile may be newer than what was read: the account stays unsure.
    if (changes === this.#changes) this.#remember(account, ban);
    return ban;
  }

  /** The ban as stored at most CACHE_TTL_MS ago (for checks on every request). */
  async recent(account: AccountKey): Promise<BanDetails | undefined> {
    const k = key(account);
    const entry = this.#cache.get(k);
    const now = Date.now();
    if (entry && entry.until > now) return entry.ban;
    if (now - this.#bannedAt > CACHE_TTL_MS) void this.#loadBanned();
    if (this.#banned && !this.#banned.has(k) && !this.#unsure.has(k)) return undefined;
    return this.read(account);
  }

  async write(storage: ClaimedNamespace, account: AccountKey, ban: BanDetails): Promise<void> {
    await storage.set(account.user, account.host, x('banned', { xmlns: NS_BANNED }, ...BAN_FIELDS.map((name) => x(name, {}, ban[name]))));
    this.#changes++;
    this.#remember(account, ban);
    await this.caches.changed(BANS_CACHE, key(account));
  }

  /** Removes the ban; false when there was none. */
  async remove(storage: ClaimedNamespace, account: AccountKey): Promise<boolean> {
    const removed = await storage.delete(account.user, account.host);
    this.#changes++;
    this.#remember(account, undefined);
    await this.caches.changed(BANS_CACHE, key(account));
    return removed;
  }

  /** Drops what is known of the account: it was removed, and a new account of that name is not banned. */
  forget(account: AccountKey): Promise<void> {
    this.#changes++;
    this.#remember(account, undefined);
    return this.caches.changed(BANS_CACHE, key(account));
  }

  #remember(account: AccountKey, ban: BanDetails | undefined): void {
    const k = key(account);
    if (ban) this.#banned?.add(k);
    else this.#banned?.delete(k);
    this.#unsure.delete(k);
    this.#cache.delete(k);
    this.#cache.set(k, { ban, until: Date.now() + CACHE_TTL_MS });
    if (this.#cache.size > CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value!);
  }
}

function key(account: AccountKey): string {
  return `${account.user}@${account.host}`;
}

/** A missing child reads as empty. */
function parse(element: XmlElement): BanDetails {
  const text = (name: string) => element.getChildText(name) ?? '';
  return { reason: text('reason'), bandate: text('bandate'), lastdate: text('lastdate'), lastreason: text('lastreason') };
}
