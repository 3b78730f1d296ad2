/**
 * Prepared statements kept by a SQLite connection, and LIMIT counts written into the statement they limit.
 *
 * knex prepares every query anew (its better-sqlite3 client calls `prepare` per query), and preparing costs
 * as much as running a simple query: the connection keeps its prepared statements by SQL text instead.
 * Safe because knex runs each statement to completion at once (`all` or `run`, never an open iterator) on
 * the one connection, and sets no per-statement mode (no safeIntegers option is used here); SQLite prepares
 * a statement again by itself when the schema changed under it.
 *
 * A kept statement is not enough for `.first()` and `.limit(n)`, which knex writes as `… limit ?`. SQLite
 * (3.53, as better-sqlite3 12 bundles it) reads a bound LIMIT while planning, so binding that parameter
 * marks the statement expired and its next step compiles it again (sqlite3ExprIsInteger with a parse
 * context, sqlite3VdbeSetVarmask): 8 µs instead of 2.7 for a lookup by primary key, more for a join. Such a
 * statement runs here with its count as a literal (`limit 1`), one prepared statement per count used; the
 * count is a knex-built trailing `limit ?`, bound to an integer, so it goes into the text as digits only.
 */

/** The part of a better-sqlite3 statement knex's client uses. */
interface SqliteStatement {
  readonly reader: boolean;
  all(bindings: unknown[]): unknown;
  run(bindings: unknown[]): unknown;
}

/** The part of a better-sqlite3 connection this file wraps. */
export interface SqliteConnection {
  prepare(source: string): unknown;
}

/** Statements kept per connection; past it the cache starts over (the server's queries are a few hundred texts). */
const STATEMENT_CACHE_SIZE = 1000;

/** knex's LIMIT as the last clause of a statement, with or without an OFFSET after it. */
const TRAILING_LIMIT = / limit \?( offset \?)?$/;

/** Makes `connection.prepare` answer from a cache, with LIMIT counts inlined as above. */
export function cacheStatements(connection: SqliteConnection): void {
  const prepare = connection.prepare.bind(connection) as (source: string) => SqliteStatement;
  const statements = new Map<string, SqliteStatement>();
  const limited = new Map<string, LiteralLimit>();
  /** The statement as written, prepared once. */
  const kept = (source: string): SqliteStatement => {
    let statement = statements.get(source);
    if (statement === undefined) {
      if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear();
      statement = prepare(source);
      statements.set(source, statement);
    }
    return statement;
  };
  connection.prepare = (source: string): SqliteStatement => {
    const limit = TRAILING_LIMIT.exec(source);
    if (!limit) return kept(source);
    let statement = limited.get(source);
    if (statement === undefined) {
      if (limited.size >= STATEMENT_CACHE_SIZE) limited.clear();
      statement = new LiteralLimit(source, limit.index, limit[1] !== undefined, kept);
      limited.set(source, statement);
    }
    return statement;
  };
}

/** A `… limit ?` statement that runs as `… limit <count>`, for the count it is given each time. */
class LiteralLimit implements SqliteStatement {
  readonly reader: boolean;
  readonly #source: string;
  readonly #head: string;
  readonly #tail: string;
  /** Where the count is among the bindings, from the end: 1, or 2 when an OFFSET follows it. */
  readonly #fromEnd: number;
  readonly #kept: (source: string) => SqliteStatement;

  constructor(source: string, at: number, offset: boolean, kept: (source: string) => SqliteStatement) {
    this.#source = source;
    this.#head = `${source.slice(0, at)} limit `;
    this.#tail = offset ? ' offset ?' : '';
    this.#fromEnd = offset ? 2 : 1;
    this.#kept = kept;
    // Prepared as knex wrote it: it says whether the statement returns rows, and runs a count that is not an integer.
    this.reader = kept(source).reader;
  }

  all(bindings: unknown[]): unknown {
    const [statement, rest] = this.#literal(bindings);
    return statement.all(rest);
  }

  run(bindings: unknown[]): unknown {
    const [statement, rest] = this.#literal(bindings);
    return statement.run(rest);
  }

  #literal(bindings: unknown[]): [SqliteStatement, unknown[]] {
    const at = bindings.length - this.#fromEnd;
    const count = bindings[at];
    // knex binds `.limit()`'s argument as given: anything but a safe integer runs bound, as written.
    if (at < 0 || typeof count !== 'number' || !Number.isSafeInteger(count)) return [this.#kept(this.#source), bindings];
    const rest = bindings.slice();
    rest.splice(at, 1);
    return [this.#kept(`${this.#head}${count}${this.#tail}`), rest];
  }
}
