/**
 * Reads that knex builds and compiles once, for look-ups a server runs again and again with new values: the account
 * at each login, the roster, the offline queue.
 *
 * Through knex, every run builds a query object, compiles it to SQL, and goes through the runner: on SQLite three
 * times what answering takes (20 µs against 7 for a look-up by primary key, warm; in a cold worker knex's code is a
 * fifth of a login's main thread). Here the query is built once per knex instance, with placeholders where the
 * values go, and compiled by knex (so the SQL is knex's, for each dialect); a run only puts the values in their
 * places:
 *   - SQLite: on the connection, through its kept statement (the kernel's statement cache), taken and given back as
 *     any query takes it: a transaction holding it makes the read wait, as knex would.
 *   - MySQL and PostgreSQL: knex.raw with the compiled text: no building or compiling, knex's pool and runner.
 *
 *   const accountRow = preparedRead<'host' | 'user', UserRow>((db, p) => db('users').first('*').where({ host: p('host'), username: p('user') }));
 *   const row = await accountRow.first(db, { host, user });
 *
 * `p(name)` stands for one value anywhere knex binds one (not a list: `whereIn` compiles one placeholder per item
 * of the list it is built with); `p.count(name)` for a LIMIT or OFFSET (knex wants a number there). Only reads: the
 * build must end in a select or `first` (anything else is refused when it is compiled). On SQLite the run does not
 * pass through knex's runner, so knex's `query` events and its debug output do not show it.
 */
import type { Knex } from 'knex';
import { sqlClientOf, type SqlClient } from './sql.js';
import { onSqliteConnection } from './sqlite-connection.js';

/** A placeholder function: `p(name)` for a value, `p.count(name)` for a LIMIT or OFFSET. */
export interface Placeholders<P extends string> {
  (name: P): string;
  count(name: P): number;
}

export interface PreparedRead<P extends string, R> {
  /** Every row for these values. */
  all(db: Knex | Knex.Transaction, values: Readonly<Record<P, unknown>>): Promise<R[]>;
  /** The first row for these values, or undefined. */
  first(db: Knex | Knex.Transaction, values: Readonly<Record<P, unknown>>): Promise<R | undefined>;
}

/** One compiled form per dialect: each writes its own SQL. */
interface Compiled {
  readonly sql: string;
  /** Each binding: a constant knex compiled in, or the name of the value that goes there. */
  readonly bindings: ReadonlyArray<{ readonly constant: unknown } | { readonly param: string }>;
  readonly sqlite: boolean;
}

/** Values no query writes: a text marker, and integers far past any real LIMIT, one per name. */
const TEXT_MARK = '\u0000prepared-read:';
const COUNT_BASE = 1_987_654_321;

export function preparedRead<P extends string, R = Record<string, unknown>>(build: (db: Knex, p: Placeholders<P>) => Knex.QueryBuilder): PreparedRead<P, R> {
  const compiled = new Map<SqlClient, Compiled>();

  const compile = (db: Knex | Knex.Transaction): Compiled => {
    const dialect = sqlClientOf(db as Knex);
    let form = compiled.get(dialect);
    if (form) return form;
    const counts: string[] = [];
    const p = ((name: P) => `${TEXT_MARK}${name}\u0000`) as Placeholders<P>;
    p.count = (name: P) => {
      if (!counts.includes(name)) counts.push(name);
      return COUNT_BASE + counts.indexOf(name);
    };
    const { sql, bindings, method } = build(db as Knex, p).toSQL() as Knex.Sql & { method: string };
    if (method !== 'select' && method !== 'first') throw new Error(`preparedRead takes a select, not a ${method}: ${sql}`);
    form = {
      sql,
      bindings: bindings.map((value) => {
        if (typeof value === 'string' && value.startsWith(TEXT_MARK)) return { param: value.slice(TEXT_MARK.length, -1) };
        if (typeof value === 'number' && value >= COUNT_BASE && value < COUNT_BASE + counts.length) return { param: counts[value - COUNT_BASE]! };
        return { constant: value };
      }),
      sqlite: dialect === 'better-sqlite3',
    };
    compiled.set(dialect, form);
    return form;
  };

  const rows = async (db: Knex | Knex.Transaction, values: Readonly<Record<P, unknown>>): Promise<R[]> => {
    const form = compile(db);
    const bind = form.sqlite ? sqliteValue : (value: unknown) => value;
    const bindings = form.bindings.map((b) => bind('param' in b ? given(values[b.param as P]) : b.constant));
    if (!form.sqlite) return rowsOf(await db.raw(form.sql, bindings as Knex.RawBinding[]));
    return onSqliteConnection(db.client as Knex.Client, (connection) => connection.prepare(form.sql).all(bindings) as R[]);
  };

  return {
    all: rows,
    first: async (db, values) => (await rows(db, values))[0],
  };
}

function given(value: unknown): unknown {
  if (value === undefined) throw new Error('preparedRead: a value is missing');
  return value;
}

/** A value as knex binds it for better-sqlite3, which takes neither booleans nor dates. */
function sqliteValue(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.getTime();
  return value;
}

/** The rows of a raw result: mysql2 answers [rows, fields], pg a result with `rows`. */
function rowsOf<R>(result: unknown): R[] {
  if (Array.isArray(result)) return (Array.isArray(result[0]) ? result[0] : result) as R[];
  return ((result as { rows?: R[] }).rows ?? []) as R[];
}
