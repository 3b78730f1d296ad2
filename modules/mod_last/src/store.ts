/** Last activity in SQL: one row per account, replaced at each last logout. */
import type { ModuleContext } from '@service/plugin-api';
import type { AccountKey } from '@service/plugin-api';
import { LAST_TABLE } from './migrations.js';

type Db = ModuleContext['db'];

export interface StoredLastActivity {
  /** When the account's last session ended, in milliseconds since the epoch. */
  readonly logoutAt: number;
  readonly status: string;
}

export class LastActivityStore {
  constructor(private readonly db: Db) {}

  async get(account: AccountKey): Promise<StoredLastActivity | undefined> {
    const row: { logout_at: number; status: string } | undefined = await this.db(LAST_TABLE)
      .first('logout_at', 'status')
      .where({ host: account.host, username: account.user });
    return row ? { logoutAt: row.logout_at, status: row.status } : undefined;
  }

  async set(account: AccountKey, activity: StoredLastActivity): Promise<void> {
    await this.db(LAST_TABLE)
      .insert({ host: account.host, username: account.user, logout_at: activity.logoutAt, status: activity.status })
      .onConflict(['host', 'username'])
      .merge(['logout_at', 'status']);
  }

  async delete(account: AccountKey): Promise<boolean> {
    return (await this.db(LAST_TABLE).where({ host: account.host, username: account.user }).delete()) > 0;
  }

  /** The accounts of `host` whose last logout is at or after `since` (ms), sorted. */
  async loggedOutSince(host: string, since: number): Promise<string[]> {
    const rows: Array<{ username: string }> = await this.db(LAST_TABLE)
      .select('username')
      .where('host', host)
      .andWhere('logout_at', '>=', since)
      .orderBy('username');
    return rows.map((r) => r.username);
  }
}
