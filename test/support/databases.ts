/**
 * The databases the storage tests run against. MariaDB and PostgreSQL are expected on their usual local
 * ports (CI provides them); each `settings()` call creates a fresh, uniquely named database so tests never
 * see each other's rows, and `cleanup()` drops what was created.
 *
 * TEST_DATABASES (comma list, default `sqlite,mysql,pgsql`) narrows the set. A server that is listed but
 * unreachable fails the run: skipping would pass CI while testing nothing.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { SqlSettings, SqlType } from '../../kernel/src/storage/database.js';

export interface TestDatabase {
  name: SqlType;
  /** A fresh database; for SQLite, a new file under `dataDir`. */
  settings(dataDir: string): Promise<SqlSettings>;
  /** Drops every database this entry created. */
  cleanup(): Promise<void>;
}

const MYSQL = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };
const PGSQL = { host: '127.0.0.1', port: 5432, user: 'postgres', password: '' };
const ALL: readonly SqlType[] = ['sqlite', 'mysql', 'pgsql'];

export function testDatabases(): TestDatabase[] {
  return selectedTypes().map(testDatabase);
}

/** One kind of database, whatever TEST_DATABASES says (benchmarks name theirs). */
export function testDatabase(type: SqlType): TestDatabase {
  switch (type) {
    case 'sqlite':
      return sqlite();
    case 'mysql':
      return mysqlDatabase();
    case 'pgsql':
      return pgsqlDatabase();
  }
}

function selectedTypes(): SqlType[] {
  const raw = process.env.TEST_DATABASES?.trim();
  if (!raw) return [...ALL];
  const names = raw.split(',').map((n) => n.trim()).filter(Boolean);
  for (const name of names) {
    if (!ALL.includes(name as SqlType)) throw new Error(`TEST_DATABASES: unknown database '${name}', expected ${ALL.join(', ')}`);
  }
  return [...new Set(names as SqlType[])];
}

function uniqueName(): string {
  return `svc_test_${randomBytes(6).toString('hex')}`;
}

function sqlite(): TestDatabase {
  return {
    name: 'sqlite',
    settings: async () => ({ type: 'sqlite', server: '', database: `${uniqueName()}.db`, username: '', password: '', poolSize: 1 }),
    // The files live under the caller's data directory, which the caller removes.
    cleanup: async () => undefined,
  };
}

function mysqlDatabase(): TestDatabase {
  const created: string[] = [];
  const admin = async () => {
    try {
      return await mysql.createConnection(MYSQL);
    } catch (err) {
      throw unreachable('MariaDB/MySQL', MYSQL, err);
    }
  };
  return {
    name: 'mysql',
    async settings() {
      const name = uniqueName();
      const connection = await admin();
      try {
        await connection.query(`create database \`${name}\` character set utf8mb4`);
      } finally {
        await connection.end();
      }
      created.push(name);
      return { type: 'mysql', server: MYSQL.host, port: MYSQL.port, database: name, username: MYSQL.user, password: MYSQL.password, poolSize: 5 };
    },
    async cleanup() {
      if (!created.length) return;
      const connection = await admin();
      try {
        for (const name of created.splice(0)) await connection.query(`drop database if exists \`${name}\``);
      } finally {
        await connection.end();
      }
    },
  };
}

function pgsqlDatabase(): TestDatabase {
  const created: string[] = [];
  const admin = async () => {
    const client = new pg.Client({ ...PGSQL, database: 'postgres' });
    try {
      await client.connect();
    } catch (err) {
      throw unreachable('PostgreSQL', PGSQL, err);
    }
    return client;
  };
  return {
    name: 'pgsql',
    async settings() {
      const name = uniqueName();
      const client = await admin();
      try {
        await client.query(`create database "${name}"`);
      } finally {
        await client.end();
      }
      created.push(name);
      return { type: 'pgsql', server: PGSQL.host, port: PGSQL.port, database: name, username: PGSQL.user, password: PGSQL.password, poolSize: 5 };
    },
    async cleanup() {
      if (!created.length) return;
      const client = await admin();
      try {
        // FORCE: a test that failed midway may have left a pool open.
        for (const name of created.splice(0)) await client.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

function unreachable(what: string, target: { host: string; port: number; user: string }, err: unknown): Error {
  const reason = err instanceof Error ? err.message || (err as { code?: string }).code || err.name : String(err);
  return new Error(
    `${what} is not reachable at ${target.host}:${target.port} as ${target.user} (${reason}); ` +
      `the storage tests need it, or set TEST_DATABASES to leave it out`,
    { cause: err },
  );
}
