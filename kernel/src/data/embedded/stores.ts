/**
 * Which SQLite files the embedded-database commands (ejabberd's "mnesia" family) cover, and how to reach
 * their live connections. The family covers the embedded store (data_dir/embedded.db) and, when sql_type is
 * sqlite, the SQL database too: on a default install that is where the data lives. MySQL and PostgreSQL are
 * left out (their own tools, mysqldump and pg_dump, back them up) and every result says so.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { Knex } from 'knex';
import { badArgument, failed, notFound } from '@service/plugin-api';
import type { KernelServices } from '../../modules/services.js';
import { EMBEDDED_DB_FILE } from '../../storage/database.js';

export type StoreName = 'sql' | 'mnesia';
export type Connection = BetterSqlite3.Database;

export interface EmbeddedStore {
  readonly name: StoreName;
  /** Absolute path of the SQLite file. */
  readonly file: string;
}

export interface StoreSet {
  readonly stores: EmbeddedStore[];
  /** Why the SQL database is not covered (MySQL/PostgreSQL), for results and info; undefined when it is. */
  readonly excluded?: string;
}

/** The fallback file install_fallback writes and the next start restores. */
export const FALLBACK_FILE = 'fallback.bak';

export function embeddedFile(dataDir: string): string {
  return resolve(dataDir, EMBEDDED_DB_FILE);
}

/** The SQLite files of a configuration: the SQL one when it is SQLite, and the embedded one (if it exists, unless `all`). */
export function storesOf(config: { dataDir: string; sql: { type: string; database: string; server: string } }, all = false): StoreSet {
  const stores: EmbeddedStore[] = [];
  const embedded = embeddedFile(config.dataDir);
  let excluded: string | undefined;
  if (config.sql.type === 'sqlite' && config.sql.database !== ':memory:') {
    stores.push({ name: 'sql', file: resolve(config.dataDir, config.sql.database) });
  } else if (config.sql.type !== 'sqlite') {
    const tool = config.sql.type === 'mysql' ? 'mysqldump' : 'pg_dump';
    excluded = `the SQL database (${config.sql.type} '${config.sql.database}' at ${config.sql.server}) is not covered: back it up with ${tool}`;
  }
  if (!stores.some((s) => s.file === embedded) && (all || existsSync(embedded))) stores.push({ name: 'mnesia', file: embedded });
  return { stores, ...(excluded ? { excluded } : {}) };
}

export function liveStores(services: KernelServices, all = false): StoreSet {
  return storesOf(services.config(), all);
}

export function knexOf(services: KernelServices, store: StoreName): Knex {
  return services.storage.db(store);
}

interface PoolClient {
  acquireConnection(): Promise<Connection>;
  releaseConnection(connection: Connection): Promise<unknown>;
}

/**
 * Runs `work` holding the store's one connection (the pool has exactly one): every other query of the server
 * on that store waits until it is released, so what `work` does in one transaction is all anyone sees.
 */
export async function holdingConnection<T>(knex: Knex, work: (db: Connection) => Promise<T>): Promise<T> {
  const client = knex.client as PoolClient;
  const connection = await client.acquireConnection();
  try {
    return await work(connection);
  } finally {
    await client.releaseConnection(connection);
  }
}

/** The store's live connection, released at once (for the online backup, which runs between the server's own queries). */
export async function sharedConnection(knex: Knex): Promise<Connection> {
  return holdingConnection(knex, async (db) => db);
}

/** Gives the event loop a turn between two steps of a long job. */
export function yieldTurn(): Promise<void> {
  return new Promise((done) => setImmediate(done));
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The user tables of a connection's main database (or an attached schema), by name. */
export function tablesOf(db: Connection, schema = 'main'): string[] {
  return (db.prepare(`SELECT name FROM ${quoteIdent(schema)}.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as Array<{ name: string }>).map((r) => r.name);
}

export interface TableRef {
  readonly store: StoreName;
  readonly table: string;
  /** The name commands show: plain, or `store.table` when both stores have that table. */
  readonly display: string;
}

/** Every table of the live stores, with the names the commands show and accept. */
export async function liveTables(services: KernelServices): Promise<TableRef[]> {
  const { stores } = liveStores(services);
  const perStore: Array<[StoreName, string[]]> = [];
  for (const store of stores) perStore.push([store.name, await holdingConnection(knexOf(services, store.name), async (db) => tablesOf(db))]);
  const seen = new Map<string, number>();
  for (const [, tables] of perStore) for (const t of tables) seen.set(t, (seen.get(t) ?? 0) + 1);
  return perStore.flatMap(([store, tables]) => tables.map((table) => ({ store, table, display: (seen.get(table) ?? 0) > 1 ? `${store}.${table}` : table })));
}

/** Finds the table an argument names (`roster`, or `sql.roster` / `mnesia.roster`); a clear error otherwise. */
export async function resolveTable(services: KernelServices, argument: string, name: string): Promise<TableRef> {
  if (!name) throw badArgument(argument, `argument '${argument}' must name a table`);
  const tables = await liveTables(services);
  const found = tables.find((t) => t.display === name || `${t.store}.${t.table}` === name);
  if (found) return found;
  const ambiguous = tables.filter((t) => t.table === name);
  if (ambiguous.length > 1) throw badArgument(argument, `table '${name}' exists in both stores: say ${ambiguous.map((t) => `${t.store}.${t.table}`).join(' or ')}`);
  throw notFound(`unknown table '${name}'; the tables are: ${tables.map((t) => t.display).join(', ') || 'none'}`);
}

export function dataDirOf(services: KernelServices): string {
  return services.config().dataDir;
}

export function fallbackPath(dataDir: string): string {
  return join(dataDir, FALLBACK_FILE);
}

/**
 * Prepares a statement outside the connection's statement cache (storage/database.ts keeps the server's own
 * statements by text): the commands' statements name attached images and per-table texts, used once.
 */
export function fresh(db: Connection, source: string): BetterSqlite3.Statement {
  return (Object.getPrototypeOf(db) as { prepare(this: Connection, source: string): BetterSqlite3.Statement }).prepare.call(db, source);
}

const ROWS_PER_DELETE = 5000;

/** Empties a table in chunks with the event loop served between them (one DELETE of a big table would hold it). */
export async function emptyTable(db: Connection, table: string, schema = 'main'): Promise<number> {
  const name = `${quoteIdent(schema)}.${quoteIdent(table)}`;
  let chunk: BetterSqlite3.Statement;
  try {
    chunk = fresh(db, `DELETE FROM ${name} WHERE rowid IN (SELECT rowid FROM ${name} LIMIT ${ROWS_PER_DELETE})`);
  } catch {
    // A WITHOUT ROWID table: at once.
    return fresh(db, `DELETE FROM ${name}`).run().changes;
  }
  let deleted = 0;
  for (;;) {
    const { changes } = chunk.run();
    deleted += changes;
    if (changes < ROWS_PER_DELETE) return deleted;
    await yieldTurn();
  }
}
