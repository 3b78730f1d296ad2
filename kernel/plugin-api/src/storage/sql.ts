/**
 * What a module needs to declare and use its tables on any of the server's databases (SQLite, MariaDB/MySQL,
 * PostgreSQL): the migration shape, the dialect of a knex instance, byte-exact keys on MySQL, and the one
 * way each dialect reports a duplicate key.
 */
import type { Knex } from 'knex';

/** Where a module's data lives: `sql` (the configured database) or `mnesia` (the embedded SQLite store). */
export type DbKind = 'sql' | 'mnesia';

/** The configured SQL database (`sql_type`). */
export type SqlType = 'sqlite' | 'mysql' | 'pgsql';

export interface Migration {
  /** Unique within its owner, applied in array order, e.g. '001_users'. */
  readonly id: string;
  /**
   * Returns the schema builder WITHOUT awaiting it, e.g. `k => k.schema.createTable(...)`; the runner
   * awaits it (or, for `print_sql_schema`, renders it to SQL with `.toString()` without a connection).
   */
  up(knex: Knex): Knex.SchemaBuilder;
}

/** The knex client names this server drives. */
export type SqlClient = 'better-sqlite3' | 'mysql2' | 'pg';

/**
 * The dialect family of a knex instance (or transaction). Migrations that need dialect-specific DDL
 * (collations, charsets) call this on the knex they are given.
 */
export function sqlClientOf(knex: Knex): SqlClient {
  const config = knex.client.config as Knex.Config;
  const client = typeof config.client === 'string' ? config.client : '';
  if (client.includes('sqlite')) return 'better-sqlite3';
  if (client.startsWith('mysql')) return 'mysql2';
  if (client === 'pg' || client.startsWith('postgres')) return 'pg';
  throw new Error(`unsupported knex client '${client || 'custom'}': expected better-sqlite3, mysql2 or pg`);
}

/**
 * Text keys compared byte for byte on MySQL/MariaDB too, as SQLite and PostgreSQL compare them: their
 * default collations would make 'Work' and 'work', or 'rené' and 'rene', one key. Call it first thing in
 * a createTable callback; it does nothing on the other databases.
 */
export function binaryCollation(knex: Knex, table: Knex.CreateTableBuilder): void {
  if (sqlClientOf(knex) !== 'mysql2') return;
  table.charset('utf8mb4');
  table.collate('utf8mb4_bin');
}

/**
 * True when a database error is a unique or primary key violation, whatever the dialect: callers map it
 * to a conflict instead of trusting a prior SELECT, which races.
 */
export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, errno } = err as { code?: unknown; errno?: unknown };
  return (
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'ER_DUP_ENTRY' ||
    errno === 1062 ||
    code === '23505'
  );
}

/**
 * Deletes the rows `pick` selects (a query on `table` with its filters, order and limit): the portable
 * "DELETE … ORDER BY … LIMIT" that a purge in steps needs, which PostgreSQL and SQLite lack. The ids are
 * read first, then those rows deleted; returns how many went. `table` must have an `id` key.
 */
export async function deletePicked(db: Knex, table: string, pick: Knex.QueryBuilder): Promise<number> {
  const rows: Array<{ id: number | string }> = await pick.select('id');
  if (!rows.length) return 0;
  return db(table)
    .whereIn(
      'id',
      rows.map((r) => r.id),
    )
    .delete();
}
