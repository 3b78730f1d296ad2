/**
 * Last activity in SQL: one row per account, replaced at each last logout. The logouts' upserts share
 * statements (the plugin API's BatchWriter): when many clients go at once (a network cut, a restart of
 * their side), each upsert was a commit of its own, and with several workers each commit takes the SQLite
 * file's write lock that they share, a worker that finds it taken sleeping in SQLite's busy handler with its
 * event loop held.
 */
import { BatchWriter, type AccountKey, type ModuleContext } from '@service/plugin-api';
import { LAST_TABLE } from './migrations.js';

type Db = ModuleContext['db'];

export interface StoredLastActivity {
  /** When the account's last session ended, in milliseconds since the epoch. */
  readonly logoutAt: number;
  readonly status: string;
}

interface LastRow {
  readonly host: string;
  readonly username: string;
  readonly logout_at: number;
  readonly status: string;
}

/** Rows per upsert: four bound values each, far below every database's limit on a statement's values. */
const MAX_ROWS_PER_UPSERT = 200;
/** Under load, upserts start at least this far apart so that the logouts of a burst share them. */
const MIN_MS_BETWEEN_UPSERTS = 4;

export class LastActivityStore {
  readonly #writer: BatchWriter<LastRow>;

  constructor(private readonly db: Db) {
    this.#writer = new BatchWriter<LastRow>({ write: (rows) => this.#upsert(rows), maxRows: MAX_ROWS_PER_UPSERT, minIntervalMs: MIN_MS_BETWEEN_UPSERTS });
  }

  async get(account: AccountKey): Promise<StoredLastActivity | undefined> {
    const row: { logout_at: number; status: string } | undefined = await this.db(LAST_TABLE)
      .first('logout_at', 'status')
      .where({ host: account.host, username: account.user });
    return row ? { logoutAt: row.logout_at, status: row.status } : undefined;
  }

  /** Resolves once the row is committed, in a statement it may share with other accounts' logouts. */
  set(account: AccountKey, activity: StoredLastActivity): Promise<void> {
    return this.#writer.add({ host: account.host, username: account.user, logout_at: activity.logoutAt, status: activity.status });
  }

  /** Writes the queued rows (the module's stop). */
  flush(): Promise<void> {
    return this.#writer.flush();
  }

  /**
   * One upsert for the batch. An account twice in one batch (set_last called twice in a turn) keeps its
   * later row: PostgreSQL refuses a statement that would update one row twice.
   */
  async #upsert(rows: readonly LastRow[]): Promise<void> {
    const latest = new Map<string, LastRow>();
    for (const row of rows) latest.set(`${row.host}\u0000${row.username}`, row);
    await this.db(LAST_TABLE).insert([...latest.values()]).onConflict(['host', 'username']).merge(['logout_at', 'status']);
  }

  /** After the queued rows: a logout queued just before the account's removal must not be written after it. */
  async delete(account: AccountKey): Promise<boolean> {
    await this.#writer.flush();
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
