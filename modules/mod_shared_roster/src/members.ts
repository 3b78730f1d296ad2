/**
 * Who `@all@` and `@online@` stand for: the accounts of a vhost (cached per vhost, loaded when first
 * needed and kept current by the register_user and remove_user hooks), and the accounts with an available
 * session (kept by the presence middleware and the session-closed hook).
 */
import type { C2SSession, ServerServices, XmppApi } from '@service/plugin-api';

/**
 * The shared caches' name for what this module keeps in memory: key a vhost when only its accounts changed
 * (a registration), no key when the groups did (a group command, an account removed from its groups). A
 * change on one node of a cluster makes every other node read them again.
 */
export const SHARED_ROSTER_CACHE = 'shared_roster';

export class HostAccounts {
  readonly #cache = new Map<string, Promise<Set<string>>>();

  constructor(private readonly accounts: ServerServices['accounts']) {}

  /** The bare JIDs of a vhost's accounts. */
  of(host: string): Promise<Set<string>> {
    let users = this.#cache.get(host);
    if (!users) {
      users = this.accounts.listUsers(host).then((names) => new Set(names.map((name) => `${name}@${host}`)));
      // A failed load is not kept: the next question loads again.
      const loading = users;
      loading.catch(() => {
        if (this.#cache.get(host) === loading) this.#cache.delete(host);
      });
      this.#cache.set(host, users);
    }
    return users;
  }

  /** An account was created; a load under way finishes first, so that it cannot bring back an older list. */
  async added(bare: string, host: string): Promise<void> {
    const users = this.#cache.get(host);
    if (users) (await users.catch(() => new Set<string>())).add(bare);
  }

  async removed(bare: string, host: string): Promise<void> {
    const users = this.#cache.get(host);
    if (users) (await users.catch(() => new Set<string>())).delete(bare);
  }

  clear(): void {
    this.#cache.clear();
  }

  /** Forgets a vhost's accounts (another node registered one): read again when next needed. */
  forget(host: string): void {
    this.#cache.delete(host);
  }
}

export class OnlineAccounts {
  readonly #online = new Set<string>();

  constructor(private readonly xmpp: XmppApi) {}

  has(bare: string): boolean {
    return this.#online.has(bare);
  }

  add(bare: string): void {
    this.#online.add(bare);
  }

  delete(bare: string): void {
    this.#online.delete(bare);
  }

  /** Whether the account has an available session now (what the set follows). */
  async availableNow(bare: string): Promise<boolean> {
    return (await this.xmpp.sessions.byAccount(bare)).some(isAvailable);
  }

  /** The accounts of a vhost in the set. */
  *onHost(host: string): IterableIterator<string> {
    for (const bare of this.#online) if (bare.endsWith(`@${host}`)) yield bare;
  }

  /** Takes the accounts available now (the module starts while clients are online), from one snapshot. */
  async fillFromSessions(): Promise<void> {
    for (const session of await this.xmpp.sessions.all()) if (isAvailable(session)) this.#online.add(session.account.bare);
  }
}

function isAvailable(session: C2SSession): boolean {
  return session.available && !session.closed;
}
