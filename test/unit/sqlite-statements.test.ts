/**
 * The SQLite connection's statement cache (kernel/src/storage/sqlite-statements.ts), under knex and a real
 * better-sqlite3 database: each SQL text is prepared once, and knex's `… limit ?` runs with its count written
 * into the statement (a bound LIMIT makes SQLite compile the statement again at every run).
 */
import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { cacheStatements, type SqliteConnection } from '../../kernel/src/storage/sqlite-statements.js';

describe('SQLite statement cache', () => {
  let db: Knex;
  let prepared: string[];

  beforeEach(async () => {
    prepared = [];
    db = knexFactory({
      client: 'better-sqlite3',
      connection: { filename: ':memory:' },
      useNullAsDefault: true,
      pool: {
        min: 1,
        max: 1,
        afterCreate(connection: SqliteConnection, done: (err: Error | null, connection: SqliteConnection) => void) {
          // What reaches better-sqlite3's own prepare, below the cache.
          const prepare = connection.prepare.bind(connection);
          connection.prepare = (source: string) => {
            prepared.push(source);
            return prepare(source);
          };
          cacheStatements(connection);
          done(null, connection);
        },
      },
    });
    await db.schema.createTable('users', (t) => {
      t.string('username').primary();
      t.integer('n');
    });
    await db('users').insert([1, 2, 3, 4, 5].map((n) => ({ username: `u${n}`, n })));
    prepared = [];
  });

  afterEach(() => db.destroy());

  it('prepares a statement once and runs it again with other bindings', async () => {
    expect(await db('users').select('n').where({ username: 'u2' })).to.deep.equal([{ n: 2 }]);
    expect(await db('users').select('n').where({ username: 'u4' })).to.deep.equal([{ n: 4 }]);
    expect(prepared).to.deep.equal(['select `n` from `users` where `username` = ?']);
  });

  it('runs .first() with its count in the statement, one statement for every key', async () => {
    expect(await db('users').first('n').where({ username: 'u1' })).to.deep.equal({ n: 1 });
    expect(await db('users').first('n').where({ username: 'u5' })).to.deep.equal({ n: 5 });
    expect(await db('users').first('n').where({ username: 'nobody' })).to.equal(undefined);
    // The text as knex wrote it is prepared once too: it says whether the statement returns rows.
    expect(prepared).to.deep.equal([
      'select `n` from `users` where `username` = ? limit ?',
      'select `n` from `users` where `username` = ? limit 1',
    ]);
  });

  it('keeps the bindings of LIMIT with OFFSET in place, one statement per count', async () => {
    const page = (limit: number, offset: number) => db('users').select('n').orderBy('n').limit(limit).offset(offset);
    expect((await page(2, 1)).map((r) => r.n)).to.deep.equal([2, 3]);
    expect((await page(2, 3)).map((r) => r.n)).to.deep.equal([4, 5]);
    expect((await page(3, 0)).map((r) => r.n)).to.deep.equal([1, 2, 3]);
    // knex writes an OFFSET without a LIMIT as `limit -1` for SQLite (no limit).
    expect((await db('users').select('n').orderBy('n').offset(3)).map((r) => r.n)).to.deep.equal([4, 5]);
    // knex omits `offset 0`; each text as knex wrote it is prepared once, next to the ones that ran.
    expect(prepared).to.deep.equal([
      'select `n` from `users` order by `n` asc limit ? offset ?',
      'select `n` from `users` order by `n` asc limit 2 offset ?',
      'select `n` from `users` order by `n` asc limit ?',
      'select `n` from `users` order by `n` asc limit 3',
      'select `n` from `users` order by `n` asc limit -1 offset ?',
    ]);
  });

  it('runs a count that is not an integer bound, as written', async () => {
    const raw = (await db.client.acquireConnection()) as SqliteConnection;
    try {
      const statement = raw.prepare('select n from users order by n limit ?') as { all(b: unknown[]): Array<{ n: number }> };
      expect(statement.all(['2']).map((r) => r.n)).to.deep.equal([1, 2]);
      expect(statement.all([2]).map((r) => r.n)).to.deep.equal([1, 2]);
    } finally {
      await db.client.releaseConnection(raw);
    }
    expect(prepared).to.deep.equal(['select n from users order by n limit ?', 'select n from users order by n limit 2']);
  });
});
