/**
 * The archive in SQL: adding a message, reading one page of an owner's archive in (created_at, id) order
 * with the XEP-0313 filters, counting, and the deletions (one account, one peer, by age, in batches).
 * Knowing nothing of XMPP beyond the stored XML keeps the query code (query.ts) testable on its own.
 */
import { BatchWriter, ParseError, deletePicked, fromStoredXml, randomId, toStoredXml, type AccountKey, type Knex, type ModuleContext, type XmlElement } from '@service/plugin-api';
import { MAM_TABLE } from './migrations.js';

type Db = ModuleContext['db'];

export type Direction = 'in' | 'out';
/** What the purge commands' `type` selects; this module archives one-to-one messages ('chat') only. */
export type ArchiveKind = 'chat' | 'groupchat';

interface ArchiveRow {
  id: number | string;
  peer: string;
  peer_full: string;
  stanza_id: string;
  created_at: number | string;
  direction: string;
  xml: string;
}

export interface NewArchived {
  readonly peer: string;
  readonly peerFull: string;
  readonly direction: Direction;
  readonly stanza: XmlElement;
  readonly body: string;
  /** Defaults to now (ms); tests and imports give older times. */
  readonly createdAt?: number;
  /** Defaults to a fresh id. */
  readonly stanzaId?: string;
}

export interface ArchivedMessage {
  readonly stanzaId: string;
  readonly peerFull: string;
  readonly direction: Direction;
  readonly createdAt: number;
  /** The message as archived; undefined when its stored XML no longer parses. */
  readonly stanza: XmlElement | undefined;
}

/** A row's place in the archive's order. */
export interface Cursor {
  readonly createdAt: number;
  readonly id: number;
}

export interface ArchiveFilter {
  /** A bare JID (matches every resource) or a full JID (that resource only). */
  readonly with?: { readonly bare: string; readonly full?: string };
  readonly start?: number;
  readonly end?: number;
  readonly ids?: readonly string[];
  /** Rows strictly after / before these (before-id and after-id of the form). */
  readonly after?: Cursor;
  readonly before?: Cursor;
}

export interface PageRequest {
  readonly limit: number;
  /** Read from the end backwards (RSM <before/>): the page is still returned in chronological order. */
  readonly backwards: boolean;
  /** The RSM cursor: rows after it (forwards) or before it (backwards). */
  readonly from?: Cursor;
}

export interface Page {
  readonly messages: ArchivedMessage[];
  /** Whether the page reaches the end of the result set in the direction read. */
  readonly complete: boolean;
  /** How many rows match the filter; undefined when more than COUNT_LIMIT do (see page()). */
  readonly count: number | undefined;
  /** The position of the page's first row in the result set; undefined when that is not known cheaply. */
  readonly index: number | undefined;
}

/**
 * The largest result set a page query counts exactly: counting reads one index entry per row, and 5 000
 * entries take 0.5 ms on SQLite and 2 ms on MariaDB, where a million would take tens to hundreds
 * (docs/decisions.md, "Archive writes and page queries").
 */
export const COUNT_LIMIT = 5_000;

/** A server-assigned stanza id (XEP-0359): time first, so ids sort roughly by age, then randomness. */
export function newStanzaId(): string {
  return `${Date.now().toString(36)}-${randomId(9)}`;
}

/** One row of mam_messages as inserted, in INSERT_COLUMNS order. */
type InsertRow = readonly [host: string, username: string, peer: string, peerFull: string, stanzaId: string, createdAt: number, direction: Direction, kind: ArchiveKind, xml: string, body: string];

const INSERT_COLUMNS = ['host', 'username', 'peer', 'peer_full', 'stanza_id', 'created_at', 'direction', 'kind', 'xml', 'body'] as const;
const ROW_PLACEHOLDERS = `(${INSERT_COLUMNS.map(() => '?').join(', ')})`;
/**
 * Rows per INSERT: 2 500 bound parameters, far below every database's cap (SQLite 32 766, PostgreSQL and
 * MariaDB 65 535), and more than a batch reaches in practice (what arrives during one statement).
 */
export const MAX_ROWS_PER_INSERT = 250;
/**
 * The least time between two INSERTs of one process: at most 250 commits a second, so that under load rows
 * share statements (a commit costs far more than a row), for at most 4 ms more before a message goes on.
 */
export const MIN_MS_BETWEEN_INSERTS = 4;
/** The owner indexes of migration 001, which page queries name on MySQL/MariaDB (#pageSource). */
const OWNER_TIME_INDEX = 'mam_messages_owner_time';
const OWNER_PEER_TIME_INDEX = 'mam_messages_owner_peer_time';

export class ArchiveStore {
  /** Group commit of the rows `add` queues (the plugin API's BatchWriter). */
  readonly #writer: BatchWriter<InsertRow>;

  constructor(private readonly db: Db) {
    this.#writer = new BatchWriter<InsertRow>({ write: (rows) => this.#insert(rows), maxRows: MAX_ROWS_PER_INSERT, minIntervalMs: MIN_MS_BETWEEN_INSERTS });
  }

  /**
   * Archives a message; resolves with its stanza id once the row is committed. Rows added during one turn
   * of the event loop share one INSERT (the plugin API's BatchWriter); the id is chosen here, before the write.
   */
  async add(owner: AccountKey, message: NewArchived, kind: ArchiveKind = 'chat'): Promise<string> {
    const stanzaId = message.stanzaId ?? newStanzaId();
    const createdAt = message.createdAt ?? Date.now();
    await this.#writer.add([owner.host, owner.user, message.peer, message.peerFull, stanzaId, createdAt, message.direction, kind, toStoredXml(message.stanza), message.body]);
    return stanzaId;
  }

  /** Resolves once every row added so far is written (or has failed): the module's stop waits for it. */
  flush(): Promise<void> {
    return this.#writer.flush();
  }

  /**
   * One multi-row INSERT … VALUES, written out rather than built by knex: knex writes a multi-row insert
   * on SQLite as a compound SELECT, which SQLite caps at 500 terms, and its builder costs more per row.
   */
  async #insert(rows: readonly InsertRow[]): Promise<void> {
    const sql = `insert into ${MAM_TABLE} (${INSERT_COLUMNS.join(', ')}) values ${rows.map(() => ROW_PLACEHOLDERS).join(', ')}`;
    await this.db.raw(sql, rows.flat());
  }

  /** Where a stanza id of the owner's archive sits; undefined when the archive has no such id. */
  async cursorOf(owner: AccountKey, stanzaId: string): Promise<Cursor | undefined> {
    const row: { id: number | string; created_at: number | string } | undefined = await this.#archive(owner).where('stanza_id', stanzaId).first('id', 'created_at');
    return row && { id: Number(row.id), createdAt: Number(row.created_at) };
  }

  /**
   * One page. The count and the first row's index are exact when the result set holds at most COUNT_LIMIT
   * rows, and undefined past that (XEP-0059 makes both optional): counting an owner's million rows would
   * cost tens of milliseconds on every page, where the page itself is one short index range. A request for
   * no rows (RSM <max>0</max>, XEP-0059's way of asking for the count) always gets the exact count.
   */
  async page(owner: AccountKey, filter: ArchiveFilter, request: PageRequest): Promise<Page> {
    if (request.limit === 0) {
      const count = await this.#count(this.#filtered(owner, filter));
      return { messages: [], complete: count === 0, count, index: 0 };
    }
    const query = this.#filtered(owner, filter);
    if (request.from) request.backwards ? before(query, request.from) : after(query, request.from);
    const dir = request.backwards ? 'desc' : 'asc';
    const rows: ArchiveRow[] = await query
      .orderBy([
        { column: 'created_at', order: dir },
        { column: 'id', order: dir },
      ])
      .limit(request.limit + 1)
      .select('id', 'peer', 'peer_full', 'stanza_id', 'created_at', 'direction', 'xml');
    // One row more than asked tells whether the result set goes on past this page.
    const complete = rows.length <= request.limit;
    const kept = rows.slice(0, request.limit);
    if (request.backwards) kept.reverse();
    const count = await this.#countUpTo(this.#filtered(owner, filter), COUNT_LIMIT);
    let index: number | undefined = 0;
    if (kept.length) {
      const first = kept[0]!;
      // The page starts the result set: nothing before it to count, whatever the set's size.
      const atStart = (!request.backwards && !request.from) || (request.backwards && complete);
      if (atStart) index = 0;
      else if (count === undefined) index = undefined;
      // The last page (RSM <before/> without an id): what precedes it is the rest of the set.
      else if (request.backwards && !request.from) index = count - kept.length;
      else index = await this.#count(before(this.#filtered(owner, filter), { createdAt: Number(first.created_at), id: Number(first.id) }));
    }
    return { messages: kept.map(toMessage), complete, count, index };
  }

  async count(owner: AccountKey): Promise<number> {
    return this.#count(this.#archive(owner));
  }

  async deleteAccount(owner: AccountKey): Promise<number> {
    // Rows still queued would land after the delete (a message that was being archived as the account went).
    await this.flush();
    return this.#archive(owner).delete();
  }

  async deleteWithPeer(owner: AccountKey, peer: string): Promise<number> {
    await this.flush();
    return this.#archive(owner).where('peer', peer).delete();
  }

  /**
   * At most `limit` of the oldest rows of `kinds` stored before `before` (ms), of one host or of all;
   * returns how many went.
   */
  async deleteOldestBatch(before: number, kinds: readonly ArchiveKind[], limit: number, host?: string): Promise<number> {
    const pick = this.db(MAM_TABLE).where('created_at', '<', before).whereIn('kind', [...kinds]);
    if (host !== undefined) pick.andWhere('host', host);
    return deletePicked(this.db, MAM_TABLE, pick.orderBy('created_at').limit(limit));
  }

  #archive(owner: AccountKey) {
    return this.db(MAM_TABLE).where({ host: owner.host, username: owner.user });
  }

  /**
   * The rows a page query reads. MariaDB picks the purges' (host, created_at) index for an owner's page, or
   * the owner index without its time range, when other owners' rows are older (40–70 ms for a page of an
   * owner with 500 000 rows, where the owner index takes 1 ms): on MySQL/MariaDB the owner index is
   * named. Not for a query by ids, which the unique stanza_id index serves best. SQLite and PostgreSQL
   * choose well by themselves.
   */
  #pageSource(filter: ArchiveFilter): Knex.QueryBuilder {
    if (this.#dialect !== 'mysql2' || filter.ids) return this.db(MAM_TABLE);
    const index = filter.with ? OWNER_PEER_TIME_INDEX : OWNER_TIME_INDEX;
    return this.db.from(this.db.raw(`?? force index (??)`, [MAM_TABLE, index]));
  }

  get #dialect(): string {
    return String((this.db.client as { config?: { client?: unknown } }).config?.client ?? '');
  }

  #filtered(owner: AccountKey, filter: ArchiveFilter) {
    const query = this.#pageSource(filter).where({ host: owner.host, username: owner.user });
    if (filter.with) {
      query.andWhere('peer', filter.with.bare);
      if (filter.with.full !== undefined) query.andWhere('peer_full', filter.with.full);
    }
    if (filter.start !== undefined) query.andWhere('created_at', '>=', filter.start);
    if (filter.end !== undefined) query.andWhere('created_at', '<=', filter.end);
    if (filter.ids) query.whereIn('stanza_id', [...filter.ids]);
    if (filter.after) after(query, filter.after);
    if (filter.before) before(query, filter.before);
    return query;
  }

  async #count(query: Knex.QueryBuilder): Promise<number> {
    const row: { count?: number | string } | undefined = await query.count({ count: '*' }).first();
    return Number(row?.count ?? 0);
  }

  /**
   * How many rows `query` matches when that is at most `limit`, else undefined: a count that reads at most
   * `limit + 1` index entries (the inner LIMIT stops the scan), whatever the archive's size.
   */
  async #countUpTo(query: Knex.QueryBuilder, limit: number): Promise<number | undefined> {
    // In the index's order: without it PostgreSQL may count with a sequential scan, which meets an owner's
    // rows late when other owners' rows came first (tens of milliseconds).
    const bounded = query
      .select(this.db.raw('1'))
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])
      .limit(limit + 1);
    const row: { count?: number | string } | undefined = await this.db
      .from(bounded.as('bounded'))
      .count({ count: '*' })
      .first();
    const count = Number(row?.count ?? 0);
    return count > limit ? undefined : count;
  }
}

/*
 * The cursor conditions carry a plain bound on created_at besides the (created_at, id) comparison: with the
 * OR alone, SQLite (and MariaDB) scanned the owner's whole index, 40 ms for a page in the middle of half a
 * million rows; the bound makes it a range that starts at the cursor. A row-value comparison
 * ((created_at, id) > (?, ?)) would say the same, but not every supported database turns it into a range.
 */

/** Rows strictly after `cursor` in (created_at, id) order. */
function after(query: Knex.QueryBuilder, cursor: Cursor): Knex.QueryBuilder {
  return query
    .andWhere('created_at', '>=', cursor.createdAt)
    .andWhere((q) => q.where('created_at', '>', cursor.createdAt).orWhere('id', '>', cursor.id));
}

/** Rows strictly before `cursor` in (created_at, id) order. */
function before(query: Knex.QueryBuilder, cursor: Cursor): Knex.QueryBuilder {
  return query
    .andWhere('created_at', '<=', cursor.createdAt)
    .andWhere((q) => q.where('created_at', '<', cursor.createdAt).orWhere('id', '<', cursor.id));
}

function toMessage(row: ArchiveRow): ArchivedMessage {
  let stanza: XmlElement | undefined;
  try {
    stanza = fromStoredXml(row.xml);
  } catch (err) {
    // A damaged row still holds its place in the archive (ids, counts); it is sent without a message.
    if (!(err instanceof ParseError)) throw err;
  }
  return {
    stanzaId: row.stanza_id,
    peerFull: row.peer_full,
    direction: row.direction === 'out' ? 'out' : 'in',
    createdAt: Number(row.created_at),
    stanza,
  };
}
