/**
 * Database connections. The server keeps ejabberd's two storage kinds: `sql` (SQLite, MySQL/MariaDB or
 * PostgreSQL, as configured) and `mnesia`, which here is an embedded SQLite file under the data
 * directory. Every consumer gets a knex instance and speaks SQL either way.
 */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type pg from 'pg';
import type { Logger } from '../log/logger.js';
import type { DbKind, Migration, SqlClient, SqlType } from '@service/plugin-api';
import { runMigrations } from './migrations.js';
import { immediateTransactions } from './sqlite-immediate.js';
import { turnTakingQueries } from './sqlite-turns.js';
import { cacheStatements, type SqliteConnection } from './sqlite-statements.js';
import { lentConnection } from './sqlite-connection.js';

export type { DbKind, SqlType } from '@service/plugin-api';

export interface SqlSettings {
  type: SqlType;
  server: string;
  port?: number;
  /** For SQLite, a file path; a relative one is resolved against the data directory. */
  database: string;
  username: string;
  password: string;
  poolSize: number;
}

export interface StorageSettings {
  sql: SqlSettings;
  dataDir: string;
  defaultDb: DbKind;
}

export const EMBEDDED_DB_FILE = 'embedded.db';

const KNEX_CLIENT: Record<SqlType, SqlClient> = { sqlite: 'better-sqlite3', mysql: 'mysql2', pgsql: 'pg' };
const DEFAULT_PORT: Record<Exclude<SqlType, 'sqlite'>, number> = { mysql: 3306, pgsql: 5432 };
const CONNECT_TIMEOUT_MS = 10_000;
const PG_INT8_OID = 20;

export class Storage {
  readonly sqlType: SqlType;
  readonly #settings: StorageSettings;
  readonly #logger: Logger;
  readonly #sql: Knex;
  #embedded: Knex | undefined;
  #closed = false;

  private constructor(settings: StorageSettings, logger: Logger, sql: Knex) {
    this.#settings = settings;
    this.#logger = logger;
    this.#sql = sql;
    this.sqlType = settings.sql.type;
    // One SQLite file must have one connection in this process, or the two would lock each other out.
    if (settings.sql.type === 'sqlite' && sqliteFile(settings.sql.database, settings.dataDir) === embeddedFile(settings.dataDir)) {
      this.#embedded = sql;
    }
  }

  /** Opens the `sql` connection and checks it with a round trip; the embedded store opens on first use. */
  static async open(settings: StorageSettings, logger: Logger): Promise<Storage> {
    const { sql } = settings;
    if (sql.type === 'sqlite') {
      const file = sqliteFile(sql.database, settings.dataDir);
      try {
        await mkdir(settings.dataDir, { recursive: true, mode: 0o700 });
        if (file !== ':memory:') {
          await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
          createPrivately(file);
        }
      } catch (err) {
        throw new Error(connectFailure(settings, err));
      }
    }
    const knex = knexFactory(knexConfig(settings, logger));
    if (sql.type === 'sqlite') turnTakingQueries(immediateTransactions(lentConnection(knex)));
    try {
      await knex.raw('select 1');
    } catch (err) {
      await knex.destroy().catch(() => undefined);
      throw new Error(connectFailure(settings, err));
    }
    logger.info({ sql: describeTarget(settings) }, 'sql storage ready');
    return new Storage(settings, logger, knex);
  }

  /**
   * The knex instance for a kind; `mnesia` is an embedded SQLite file `<dataDir>/embedded.db`, opened
   * lazily. When sql.type is sqlite and sql.database resolves to that same file, both kinds share one
   * instance.
   */
  db(kind: DbKind = this.#settings.defaultDb): Knex {
    if (this.#closed) throw new Error('storage is closed');
    if (kind === 'sql') return this.#sql;
    if (!this.#embedded) {
      mkdirSync(this.#settings.dataDir, { recursive: true, mode: 0o700 });
      createPrivately(embeddedFile(this.#settings.dataDir));
      this.#embedded = turnTakingQueries(immediateTransactions(lentConnection(knexFactory(sqliteConfig(embeddedFile(this.#settings.dataDir), this.#logger)))));
      this.#logger.debug({ file: embeddedFile(this.#settings.dataDir) }, 'embedded storage opened');
    }
    return this.#embedded;
  }

  /** Applies `owner`'s pending migrations to the database of `kind`; returns the ids applied now. */
  async migrate(owner: string, migrations: readonly Migration[], kind?: DbKind): Promise<string[]> {
    const applied = await runMigrations(this.db(kind), owner, migrations);
    if (applied.length) this.#logger.info({ owner, migrations: applied }, 'database migrations applied');
    return applied;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const instances = new Set([this.#sql, this.#embedded].filter((k): k is Knex => k !== undefined));
    await Promise.all([...instances].map((k) => k.destroy()));
  }
}

function knexConfig(settings: StorageSettings, logger: Logger): Knex.Config {
  const { sql } = settings;
  switch (sql.type) {
    case 'sqlite':
      return sqliteConfig(sqliteFile(sql.database, settings.dataDir), logger);
    case 'mysql':
      return {
        client: KNEX_CLIENT.mysql,
        connection: {
          host: sql.server,
          port: sql.port ?? DEFAULT_PORT.mysql,
          user: sql.username,
          password: sql.password,
          database: sql.database,
          charset: 'utf8mb4',
          connectTimeout: CONNECT_TIMEOUT_MS,
        },
        pool: { min: 0, max: sql.poolSize },
        acquireConnectionTimeout: CONNECT_TIMEOUT_MS * 2,
        log: knexLog(logger),
      };
    case 'pgsql': {
      // The driver's own type parsers, loaded only for PostgreSQL (knex loads each driver only when used too).
      const { types } = createRequire(import.meta.url)('pg') as typeof pg;
      return {
        client: KNEX_CLIENT.pgsql,
        connection: {
          host: sql.server,
          port: sql.port ?? DEFAULT_PORT.pgsql,
          user: sql.username,
          password: sql.password,
          database: sql.database,
          connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
          // SQLite and mysql2 return BIGINT columns and COUNT(*) as numbers; pg would return strings.
          // Numbers everywhere keep module code dialect-free (our bigints are millisecond times and counts).
          types: {
            getTypeParser: (oid: number, format: string): unknown =>
              oid === PG_INT8_OID && format !== 'binary'
                ? (value: string) => Number(value)
                : types.getTypeParser(oid, format === 'binary' ? 'binary' : 'text'),
          },
        },
        pool: { min: 0, max: sql.poolSize },
        acquireConnectionTimeout: CONNECT_TIMEOUT_MS * 2,
        log: knexLog(logger),
      };
    }
  }
}

function sqliteConfig(filename: string, logger: Logger): Knex.Config {
  return {
    client: KNEX_CLIENT.sqlite,
    connection: { filename },
    useNullAsDefault: true,
    // better-sqlite3 is synchronous: a second connection would add lock contention, not throughput.
    pool: {
      min: 1,
      max: 1,
      afterCreate(connection: SqlitePragmas, done: (err: Error | null, connection: SqlitePragmas) => void) {
        try {
          connection.pragma('journal_mode = WAL');
          connection.pragma('synchronous = NORMAL');
          connection.pragma('foreign_keys = ON');
          connection.pragma('busy_timeout = 5000');
          cacheStatements(connection);
          done(null, connection);
        } catch (err) {
          done(err as Error, connection);
        }
      },
    },
    log: knexLog(logger),
  };
}

/** The part of a better-sqlite3 connection the pool hook uses. */
interface SqlitePragmas extends SqliteConnection {
  pragma(source: string): unknown;
}

function knexLog(logger: Logger): Knex.Logger {
  const text = (message: unknown) => (typeof message === 'string' ? message : JSON.stringify(message));
  return {
    warn: (message) => logger.warn({ component: 'knex' }, text(message)),
    error: (message) => logger.error({ component: 'knex' }, text(message)),
    debug: (message) => logger.debug({ component: 'knex' }, text(message)),
    deprecate: (method, alternative) => logger.warn({ component: 'knex' }, `${method} is deprecated, use ${alternative}`),
  };
}

function sqliteFile(database: string, dataDir: string): string {
  return database === ':memory:' ? database : path.resolve(dataDir, database);
}

function embeddedFile(dataDir: string): string {
  return path.resolve(dataDir, EMBEDDED_DB_FILE);
}

function describeTarget({ sql, dataDir }: StorageSettings): string {
  if (sql.type === 'sqlite') return `sqlite database '${sqliteFile(sql.database, dataDir)}'`;
  return `${sql.type} database '${sql.database}' at ${sql.server}:${sql.port ?? DEFAULT_PORT[sql.type]} as ${sql.username}`;
}

function connectFailure(settings: StorageSettings, err: unknown): string {
  const verb = settings.sql.type === 'sqlite' ? 'open' : 'connect to';
  const message = `cannot ${verb} ${describeTarget(settings)}: ${driverReason(err)}`;
  // Drivers do not echo passwords today; this keeps it so if one ever does.
  const { password } = settings.sql;
  return password ? message.split(password).join('********') : message;
}

function driverReason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const { code } = err as { code?: unknown };
  // Node reports a refused dual-stack connect as an AggregateError with an empty message.
  const nested = err instanceof AggregateError ? err.errors.filter((e): e is Error => e instanceof Error) : [];
  const message = err.message || nested.map((e) => e.message).join('; ') || 'unknown error';
  return typeof code === 'string' && !message.includes(code) ? `${code} ${message}` : message;
}

/**
 * Creates a database file that does not exist yet as 0600 (SQLite takes an empty file as a new database and
 * gives its -wal and -shm files the same mode): it holds password keys, and a sql_database path may lie
 * outside the 0700 data directory. An existing file keeps its mode.
 */
function createPrivately(file: string): void {
  closeSync(openSync(file, 'a', 0o600));
}
