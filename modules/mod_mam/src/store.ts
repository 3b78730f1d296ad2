/**
 * The archive in SQL: adding a message, reading one page of an owner's archive in (created_at, id) order
 * with the XEP-0313 filters, counting, and the deletions (one account, one peer, by age, in batches).
 * Knowing nothing of XMPP beyond the stored XML keeps the query code (query.ts) testable on its own.
 */
import { randomBytes } from 'node:crypto';
import { ParseError, fromStoredXml, toStoredXml, type AccountKey, type Knex, type ModuleContext, type XmlElement } from '@service/plugin-api';
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
  /** How many rows match the filter. */
  readonly count: number;
  /** The position of the page's first row in the result set. */
  readonly index: number;
}

/** A server-assigned stanza id (XEP-0359): time first, so ids sort roughly by age, then randomness. */
export function newStanzaId(): string {
  return `${Date.now().toString(36)}-${randomBytes(9).toString('base64url')}`;
}

export class ArchiveStore {
  constructor(private readonly db: Db) {}

  /** Archives a message; resolves with its stanza id once the row is written. */
  async add(owner: AccountKey, message: NewArchived, kind: ArchiveKind = 'chat'): Promise<string> {
    const stanzaId = message.stanzaId ?? newStanzaId();
    await this.db(MAM_TABLE).insert({
      host: owner.host,
      username: owner.user,
      peer: message.peer,
      peer_full: message.peerFull,
      stanza_id: stanzaId,
      created_at: message.createdAt ?? Date.now(),
      direction: message.direction,
      kind,
      xml: toStoredXml(message.stanza),
      body: message.body,
    });
    return stanzaId;
  }

  /** Where a stanza id of the owner's archive sits; undefined when the archive has no such id. */
  async cursorOf(owner: AccountKey, stanzaId: string): Promise<Cursor | undefined> {
    const row: { id: number | string; created_at: number | string } | undefined = await this.#archive(owner).where('stanza_id', stanzaId).first('id', 'created_at');
    return row && { id: Number(row.id), createdAt: Number(row.created_at) };
  }

  async page(owner: AccountKey, filter: ArchiveFilter, request: PageRequest): Promise<Page> {
    const count = await this.#count(this.#filtered(owner, filter));
    if (request.limit === 0) return { messages: [], complete: count === 0, count, index: 0 };
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
    let index = 0;
    if (kept.length) {
      const first = kept[0]!;
      index = await this.#count(before(this.#filtered(owner, filter), { createdAt: Number(first.created_at), id: Number(first.id) }));
    }
    return { messages: kept.map(toMessage), complete, count, index };
  }

  async count(owner: AccountKey): Promise<number> {
    return this.#count(this.#archive(owner));
  }

  async deleteAccount(owner: AccountKey): Promise<number> {
    return this.#archive(owner).delete();
  }

  async deleteWithPeer(owner: AccountKey, peer: string): Promise<number> {
    return this.#archive(owner).where('peer', peer).delete();
  }

  /**
   * At most `limit` of the oldest rows of `kinds` stored before `before` (ms), of one host or of all;
   * returns how many went.
   */
  async deleteOldestBatch(before: number, kinds: readonly ArchiveKind[], limit: number, host?: string): Promise<number> {
    // Portable "DELETE … ORDER BY … LIMIT": pick the ids first (PostgreSQL and SQLite lack the clause).
    const query = this.db(MAM_TABLE).select('id').where('created_at', '<', before).whereIn('kind', [...kinds]);
    if (host !== undefined) query.andWhere('host', host);
    const rows: Array<{ id: number }> = await query.orderBy('created_at').limit(limit);
    if (!rows.length) return 0;
    return this.db(MAM_TABLE)
      .whereIn(
        'id',
        rows.map((r) => r.id),
      )
      .delete();
  }

  #archive(owner: AccountKey) {
    return this.db(MAM_TABLE).where({ host: owner.host, username: owner.user });
  }

  #filtered(owner: AccountKey, filter: ArchiveFilter) {
    const query = this.#archive(owner);
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
}

/** Rows strictly after `cursor` in (created_at, id) order. */
function after(query: Knex.QueryBuilder, cursor: Cursor): Knex.QueryBuilder {
  return query.andWhere((q) => q.where('created_at', '>', cursor.createdAt).orWhere((q2) => q2.where('created_at', cursor.createdAt).andWhere('id', '>', cursor.id)));
}

/** Rows strictly before `cursor` in (created_at, id) order. */
function before(query: Knex.QueryBuilder, cursor: Cursor): Knex.QueryBuilder {
  return query.andWhere((q) => q.where('created_at', '<', cursor.createdAt).orWhere((q2) => q2.where('created_at', cursor.createdAt).andWhere('id', '<', cursor.id)));
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
