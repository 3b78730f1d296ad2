/** Offline messages in SQL: each account's queue in storage order, and the purges of old and expired ones. */
import { ParseError, deletePicked, preparedRead, type ModuleContext, type XmlElement } from '@service/plugin-api';
import type { AccountKey } from '@service/plugin-api';
import { OFFLINE_TABLE } from './migrations.js';
import { fromStoredXml, toStoredXml } from '@service/plugin-api';

type Db = ModuleContext['db'];

interface OfflineRow {
  id: number;
  host: string;
  username: string;
  from_jid: string;
  created_at: number;
  expires_at: number | null;
  xml: string;
}

/** The next rows of an account's queue, read at each login: compiled once (see preparedRead). */
const QUEUE_AFTER = preparedRead<'host' | 'user' | 'afterId' | 'limit', OfflineRow>((db, p) =>
  db(OFFLINE_TABLE).where({ host: p('host'), username: p('user') }).where('id', '>', p('afterId')).orderBy('id').limit(p.count('limit')),
);

export interface StoredMessage {
  readonly id: number;
  /** The sender's full JID. */
  readonly from: string;
  /** When it was stored, in milliseconds since the epoch. */
  readonly createdAt: number;
  /** When it expires (ms), undefined when it does not. */
  readonly expiresAt: number | undefined;
  /** The message as it arrived (without the delay element added at delivery). */
  readonly stanza: XmlElement;
}

export interface QueueChunk {
  readonly messages: StoredMessage[];
  readonly unreadable: number[];
  /** The id to continue after. */
  readonly lastId: number;
}

export interface NewMessage {
  readonly from: string;
  readonly stanza: XmlElement;
  readonly createdAt: number;
  readonly expiresAt: number | undefined;
}

export class OfflineStore {
  constructor(private readonly db: Db) {}

  async add(account: AccountKey, message: NewMessage): Promise<void> {
    await this.db(OFFLINE_TABLE).insert({
      host: account.host,
      username: account.user,
      from_jid: message.from,
      created_at: message.createdAt,
      expires_at: message.expiresAt ?? null,
      xml: toStoredXml(message.stanza),
    });
  }

  /** Messages that have not expired at `now`. */
  async count(account: AccountKey, now: number): Promise<number> {
    const row: { count?: number | string } | undefined = await this.#queue(account)
      .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
      .count({ count: '*' })
      .first();
    return Number(row?.count ?? 0);
  }

  /**
   * The next rows of the queue after `afterId` in storage order, `limit` at most: the messages, expired
   * ones included (the caller skips and deletes them), and the ids of rows whose XML no longer parses.
   */
  async next(account: AccountKey, afterId: number, limit: number): Promise<QueueChunk> {
    const rows = await QUEUE_AFTER.all(this.db, { host: account.host, user: account.user, afterId, limit });
    const chunk: QueueChunk = { messages: [], unreadable: [], lastId: rows.length ? Number(rows[rows.length - 1]!.id) : afterId };
    for (const row of rows) {
      const message = toMessage(row);
      if (message) chunk.messages.push(message);
      else chunk.unreadable.push(Number(row.id));
    }
    return chunk;
  }

  /** Messages that have not expired at `now`, in storage order. */
  async list(account: AccountKey, now: number, limit?: number): Promise<StoredMessage[]> {
    const query = this.#queue(account)
      .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
      .orderBy('id');
    if (limit !== undefined) query.limit(limit);
    const rows: OfflineRow[] = await query;
    return rows.map(toMessage).filter((m): m is StoredMessage => m !== undefined);
  }

  async delete(account: AccountKey, ids: readonly number[]): Promise<number> {
    if (!ids.length) return 0;
    return this.#queue(account).whereIn('id', [...ids]).delete();
  }

  async deleteAccount(account: AccountKey): Promise<number> {
    return this.#queue(account).delete();
  }

  async deleteExpired(now: number): Promise<number> {
    return this.db(OFFLINE_TABLE).whereNotNull('expires_at').andWhere('expires_at', '<=', now).delete();
  }

  /** At most `limit` of the messages expired at `now`; returns how many went (the command's steps). */
  deleteExpiredBatch(now: number, limit: number): Promise<number> {
    return deletePicked(this.db, OFFLINE_TABLE, this.db(OFFLINE_TABLE).whereNotNull('expires_at').andWhere('expires_at', '<=', now).limit(limit));
  }

  /** Messages stored before `before` (ms), of one host or of all. */
  async deleteStoredBefore(before: number, host?: string): Promise<number> {
    const query = this.db(OFFLINE_TABLE).where('created_at', '<', before);
    if (host !== undefined) query.andWhere('host', host);
    return query.delete();
  }

  /** At most `limit` of the oldest messages of `host` stored before `before`; returns how many went. */
  deleteOldestBatch(host: string, before: number, limit: number): Promise<number> {
    return deletePicked(this.db, OFFLINE_TABLE, this.db(OFFLINE_TABLE).where('host', host).andWhere('created_at', '<', before).orderBy('created_at').limit(limit));
  }

  #queue(account: AccountKey) {
    return this.db(OFFLINE_TABLE).where({ host: account.host, username: account.user });
  }
}

/** The message of a row; undefined when its XML does not parse (a row written by hand, a damaged one). */
function toMessage(row: OfflineRow): StoredMessage | undefined {
  let stanza: XmlElement;
  try {
    stanza = fromStoredXml(row.xml);
  } catch (err) {
    if (err instanceof ParseError) return undefined;
    throw err;
  }
  return {
    id: Number(row.id),
    from: row.from_jid,
    createdAt: Number(row.created_at),
    expiresAt: row.expires_at === null ? undefined : Number(row.expires_at),
    stanza,
  };
}
