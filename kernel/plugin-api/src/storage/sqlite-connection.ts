/**
 * Running work on SQLite's connection itself (better-sqlite3), for the storage helpers that go past knex's query
 * builder and runner where it costs more than SQLite does (pluck, preparedRead). The connection is taken and given
 * back as knex's runner takes it, so a transaction that holds it makes the work wait, and the kernel's lending and
 * turn-taking apply.
 */
import type { Knex } from 'knex';

/** The part of a better-sqlite3 statement the helpers use. */
export interface SqliteStatement {
  pluck(on?: boolean): SqliteStatement;
  all(...bindings: unknown[]): unknown[];
}

/** The part of a better-sqlite3 connection the helpers use. */
export interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
}

interface ConnectionLender {
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<void>;
}

/** Runs `work` on the SQLite connection of a knex client on better-sqlite3 (a knex instance's or a transaction's). */
export async function onSqliteConnection<T>(knexClient: Knex.Client, work: (connection: SqliteConnection) => T): Promise<T> {
  const client = knexClient as unknown as ConnectionLender;
  const connection = (await client.acquireConnection()) as SqliteConnection;
  try {
    return work(connection);
  } finally {
    await client.releaseConnection(connection);
  }
}
