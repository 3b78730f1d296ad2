/**
 * Inserts many rows into one table in as few statements as each database allows. A single knex insert of
 * many rows fails past a database's limits: on SQLite, knex writes the rows as one compound SELECT
 * (`select ? union all select ? …`), capped at 500 terms, and a statement holds at most 32 766 bound
 * variables; PostgreSQL's wire protocol counts a statement's parameters in 16 bits (65 535 at most).
 * Callers whose row count comes from input (a roster item's groups, a privacy list's items…) insert
 * through here instead.
 */
import type { Knex } from 'knex';
import { sqlClientOf } from './sql.js';

/** SQLITE_MAX_COMPOUND_SELECT of the bundled SQLite (better-sqlite3 builds it with the default). */
const SQLITE_MAX_ROWS = 500;
/** SQLITE_MAX_VARIABLE_NUMBER of the bundled SQLite (the default since SQLite 3.32). */
const SQLITE_MAX_VARIABLES = 32_766;
/**
 * PostgreSQL's protocol limit. mysql2 as knex drives it interpolates values into the text, so MySQL has no
 * such limit; the same bound keeps its statements from growing without end (max_allowed_packet).
 */
const SERVER_MAX_VARIABLES = 65_535;

/**
 * Inserts `rows` into `table`, in their order, in as many statements as the database needs. On a plain
 * knex instance, several statements run in a transaction of their own, so that the rows are stored all or
 * none as one statement would; on a transaction they run in it (on SQLite, a transaction holds the only
 * connection, so the caller's must be used).
 */
export async function insertRows(db: Knex | Knex.Transaction, table: string, rows: readonly object[]): Promise<void> {
  if (!rows.length) return;
  const size = rowsPerStatement(sqlClientOf(db), columnCount(rows));
  if (rows.length <= size) {
    await db(table).insert(rows as object[]);
    return;
  }
  const insert = async (exec: Knex | Knex.Transaction) => {
    for (let start = 0; start < rows.length; start += size) await exec(table).insert(rows.slice(start, start + size));
  };
  if (db.isTransaction) await insert(db);
  else await db.transaction(insert);
}

/** knex writes every column any row names into each row of the statement, so their count bounds what one row binds. */
function columnCount(rows: readonly object[]): number {
  const columns = new Set<string>();
  for (const row of rows) for (const column of Object.keys(row)) columns.add(column);
  return Math.max(columns.size, 1);
}

function rowsPerStatement(client: ReturnType<typeof sqlClientOf>, columns: number): number {
  if (client === 'better-sqlite3') return Math.max(1, Math.min(SQLITE_MAX_ROWS, Math.floor(SQLITE_MAX_VARIABLES / columns)));
  return Math.max(1, Math.floor(SERVER_MAX_VARIABLES / columns));
}
