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
 * HTTP Basic checks a password on every request, so whether an account is banned is also kept in memory
 * for a short while; only these commands change a ban, and they update it at once. XMPP logins always
 * read storage.
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
  /** Leaves the shared caches (when mod_admin_extra stops). */
  readonly leave: () => void;

  /** Without mod_private there is no storage (and no ban can be read or written). */
  constructor(
    private readonly storage: ClaimedNamespace | undefined,
    private readonly caches: CachesApi,
  ) {
    this.leave = caches.register(BANS_CACHE, (k) => (k === undefined ? this.#cache.clear() : this.#cache.delete(k)));
  }

  /** The ban as stored now; none while mod_private is not enabled (nothing can be read then). */
  async read(account: AccountKey): Promise<BanDetails | undefined> {
    const element = this.storage ? await this.storage.get(account.user, account.host) : undefined;
    const ban = element && parse(element);
    this.#remember(account, ban);
    return ban;
  }

  /** The ban as stored at most CACHE_TTL_MS ago (for checks on every request). */
  async recent(account: AccountKey): Promise<BanDetails | undefined> {
    const entry = this.#cache.get(key(account));
    if (entry && entry.until > Date.now()) return entry.ban;
    return this.read(account);
  }

  async write(storage: ClaimedNamespace, account: AccountKey, ban: BanDetails): Promise<void> {
    await storage.set(account.user, account.host, x('banned', { xmlns: NS_BANNED }, ...BAN_FIELDS.map((name) => x(name, {}, ban[name]))));
    this.#remember(account, ban);
    await this.caches.changed(BANS_CACHE, key(account));
  }

  /** Removes the ban; false when there was none. */
  async remove(storage: ClaimedNamespace, account: AccountKey): Promise<boolean> {
    const removed = await storage.delete(account.user, account.host);
    this.#remember(account, undefined);
    await this.caches.changed(BANS_CACHE, key(account));
    return removed;
  }

  /** Drops what is known of the account: it was removed, and a new account of that name is not banned. */
  forget(account: AccountKey): Promise<void> {
    this.#cache.delete(key(account));
    return this.caches.changed(BANS_CACHE, key(account));
  }

  #remember(account: AccountKey, ban: BanDetails | undefined): void {
    const k = key(account);
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
