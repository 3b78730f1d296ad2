/**
 * SQLite transactions that take the write lock when they begin (BEGIN IMMEDIATE), not at their first write.
 *
 * knex begins with a plain BEGIN (deferred): the transaction reads from a snapshot and asks for the write lock
 * at its first write. When another connection — another worker of this server on the same file — wrote since
 * that snapshot, SQLite cannot let it write without breaking serializability, so it fails at once with
 * SQLITE_BUSY ("database is locked"): the busy timeout does not apply to that upgrade. With the lock taken at
 * BEGIN, a transaction waits for the other writer (busy_timeout) and then runs on current data. Reads outside
 * transactions are not affected; transactions are short (one request's reads and writes).
 */
import { createRequire } from 'node:module';
import type { Knex } from 'knex';

const require = createRequire(import.meta.url);

interface SqliteTransactionClass {
  new (client: unknown, ...args: unknown[]): { query(conn: unknown, sql: string): Promise<unknown> };
}

// knex's own SQLite transaction (foreign key pragma handling, savepoints for nested transactions), with
// only its BEGIN changed. The class is internal to knex (package-lock.json pins the release; the storage
// tests run every transaction through it).
const TransactionSqlite = require('knex/lib/dialects/sqlite3/execution/sqlite-transaction.js') as SqliteTransactionClass;

class ImmediateTransaction extends TransactionSqlite {
  begin(conn: unknown): Promise<unknown> {
    return this.query(conn, 'BEGIN IMMEDIATE;');
  }
}

/** Makes a SQLite knex instance begin its transactions with BEGIN IMMEDIATE. */
export function immediateTransactions(knex: Knex): Knex {
  const client = knex.client as { transaction: (...args: unknown[]) => unknown };
  client.transaction = function (this: unknown, ...args: unknown[]) {
    return new ImmediateTransaction(this, ...args);
  };
  return knex;
}
