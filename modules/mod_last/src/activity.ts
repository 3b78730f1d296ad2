/**
 * Last activity of accounts as XEP-0012 defines it for an account's bare JID: the time since its last
 * session ended and the status text of its last presence — or "now" while it has an available session.
 */
import { Jid, type SessionDirectory } from '@service/plugin-api';
import type { AccountKey } from '@service/plugin-api';
import type { LastActivityStore, StoredLastActivity } from './store.js';

export class LastActivity {
  constructor(
    private readonly store: LastActivityStore,
    private readonly sessions: SessionDirectory,
  ) {}

  /** An available session (initial presence sent, not unavailable since) makes the account active now. */
  async isOnline(account: AccountKey): Promise<boolean> {
    return (await this.sessions.byAccount(new Jid(account.user, account.host, undefined).bare)).some((s) => s.available && !s.closed);
  }

  stored(account: AccountKey): Promise<StoredLastActivity | undefined> {
    return this.store.get(account);
  }

  record(account: AccountKey, activity: StoredLastActivity): Promise<void> {
    return this.store.set(account, activity);
  }

  delete(account: AccountKey): Promise<boolean> {
    return this.store.delete(account);
  }

  loggedOutSince(host: string, since: number): Promise<string[]> {
    return this.store.loggedOutSince(host, since);
  }
}

/** Whole seconds from `then` to `now` (ms), never negative (a timestamp set in the future reads as 0). */
export function secondsSince(then: number, now = Date.now()): number {
  return Math.max(0, Math.floor((now - then) / 1000));
}
