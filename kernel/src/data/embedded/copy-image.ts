/**
 * One step of restore: makes a live store's main database an exact copy of a verified SQLite image, inside
 * the transaction replace.ts holds. The image is attached; every table, index, trigger and view of the live
 * database is dropped and the image's tables and indexes are created from their SQL; rows are copied in
 * chunks of rowids, awaiting between chunks; then triggers and views, and the AUTOINCREMENT counters. ATTACH/DETACH happen
 * outside the transaction (SQLite requires it).
 */
import { emptyTable, fresh, quoteIdent, yieldTurn, type Connection } from './stores.js';

const ROWS_PER_CHUNK = 5000;
const SOURCE = 'restore_source';

interface SchemaObject {
  type: 'table' | 'index' | 'trigger' | 'view';
  name: string;
  tbl_name: string;
  sql: string | null;
}

export function attachImage(db: Connection, file: string): void {
  fresh(db, `ATTACH DATABASE ? AS ${SOURCE}`).run(file);
}

export function detachImage(db: Connection): void {
  try {
    db.exec(`DETACH DATABASE ${SOURCE}`);
  } catch {
    // Not attached.
  }
}

function objects(db: Connection, schema: string): SchemaObject[] {
  return fresh(db, `SELECT type, name, tbl_name, sql FROM ${schema}.sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY rowid`).all() as SchemaObject[];
}

function withoutRowid(db: Connection, schema: string, table: string): boolean {
  const row = fresh(db, `SELECT wr FROM pragma_table_list WHERE schema = ? AND name = ?`).get(schema, table) as { wr: number } | undefined;
  return row?.wr === 1;
}

/** Replaces `main` with the attached image's content, reporting rows copied through `copied`. */
export async function copyAttachedImage(db: Connection, copied: (rows: number) => void): Promise<void> {
  const live = objects(db, 'main');
  for (const type of ['view', 'trigger', 'table'] as const) {
    for (const o of live.filter((x) => x.type === type)) {
      // Emptied in chunks first: dropping a full table frees all its pages in one statement.
      if (type === 'table') await emptyTable(db, o.name);
      db.exec(`DROP ${type.toUpperCase()} IF EXISTS main.${quoteIdent(o.name)}`);
    }
  }
  const source = objects(db, SOURCE);
  // Tables and their indexes first: the indexes then grow chunk by chunk with the rows (one CREATE INDEX over a
  // full table would hold the event loop). Triggers and views come after the rows (a trigger must not fire on them).
  for (const o of source.filter((x) => x.type === 'table' && x.sql)) db.exec(o.sql!);
  for (const o of source.filter((x) => x.type === 'index' && x.sql)) db.exec(o.sql!);
  for (const o of source.filter((x) => x.type === 'table')) {
    const table = quoteIdent(o.name);
    if (withoutRowid(db, SOURCE, o.name)) {
      copied(fresh(db, `INSERT INTO main.${table} SELECT * FROM ${SOURCE}.${table}`).run().changes);
      await yieldTurn();
      continue;
    }
    const boundary = fresh(db, `SELECT rowid AS r FROM ${SOURCE}.${table} WHERE rowid > ? ORDER BY rowid LIMIT 1 OFFSET ${ROWS_PER_CHUNK - 1}`);
    const chunk = fresh(db, `INSERT INTO main.${table} SELECT * FROM ${SOURCE}.${table} WHERE rowid > ? AND rowid <= ? ORDER BY rowid`);
    const rest = fresh(db, `INSERT INTO main.${table} SELECT * FROM ${SOURCE}.${table} WHERE rowid > ? ORDER BY rowid`);
    let after: number | bigint = Number.MIN_SAFE_INTEGER;
    for (;;) {
      const next = boundary.get(after) as { r: number | bigint } | undefined;
      if (!next) {
        copied(rest.run(after).changes);
        break;
      }
      copied(chunk.run(after, next.r).changes);
      after = next.r;
      await yieldTurn();
    }
  }
  for (const type of ['trigger', 'view'] as const) {
    for (const o of source.filter((x) => x.type === type && x.sql)) db.exec(o.sql!);
  }
  const hasSequence = (schema: string) => fresh(db, `SELECT 1 FROM ${schema}.sqlite_master WHERE name = 'sqlite_sequence'`).get() !== undefined;
  if (hasSequence('main')) db.exec('DELETE FROM main.sqlite_sequence');
  if (hasSequence(SOURCE) && hasSequence('main')) db.exec(`INSERT INTO main.sqlite_sequence SELECT * FROM ${SOURCE}.sqlite_sequence`);
}
