/**
 * SQLite's one connection lent without knex's pool (kernel/src/storage/sqlite-connection.ts), under knex and a real
 * better-sqlite3 file: the pool creates the connection once and never hears of it again until knex is destroyed;
 * a transaction holds it while queries wait their turn in order; a failed query hands it on, and a stream (which
 * knex releases twice) hands it on once; destroying knex waits for the transaction holding it and refuses what waits.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { lentConnection } from '../../kernel/src/storage/sqlite-connection.js';

interface PoolCounts {
  numUsed(): number;
  numFree(): number;
}

describe('SQLite connection lent without the pool', () => {
  let dir: string;
  let db: Knex;
  let created: number;
  let acquiredFromPool: number;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lent-'));
    created = 0;
    acquiredFromPool = 0;
    db = knexFactory({
      client: 'better-sqlite3',
      connection: { filename: join(dir, 'db.sqlite') },
      useNullAsDefault: true,
      pool: {
        min: 1,
        max: 1,
        afterCreate: (connection: unknown, done: (err: Error | null, connection: unknown) => void) => {
          created++;
          done(null, connection);
        },
      },
    });
    const client = db.client as { acquireConnection(): Promise<unknown> };
    const acquire = client.acquireConnection.bind(client);
    client.acquireConnection = () => {
      acquiredFromPool++;
      return acquire();
    };
    lentConnection(db);
    await db.schema.createTable('items', (t) => {
      t.integer('n').primary();
    });
  });

  afterEach(async () => {
    await db.destroy().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes the connection from the pool once, and every query and transaction runs on it', async () => {
    for (let i = 0; i < 50; i++) await db('items').insert({ n: i });
    await Promise.all(Array.from({ length: 20 }, (_, i) => db.transaction((trx) => trx('items').where({ n: i }).update({ n: i + 100 }))));
    expect(Number((await db('items').count({ c: '*' }))[0]!.c)).to.equal(50);
    expect(await db('items').where('n', '>=', 100).count({ c: '*' }).first()).to.deep.equal({ c: 20 });
    expect(created, 'connections created').to.equal(1);
    expect(acquiredFromPool, 'acquisitions from the pool').to.equal(1);
    const pool = (db.client as { pool: PoolCounts }).pool;
    expect(pool.numUsed(), 'held from the pool').to.equal(1);
  });

  it('lets a transaction hold the connection while queries wait, then runs them in the order they came', async () => {
    const order: string[] = [];
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    let finish!: () => void;
    const finishing = new Promise<void>((resolve) => (finish = resolve));
    const transaction = db.transaction(async (trx) => {
      await trx('items').insert({ n: 1 });
      inside();
      await finishing;
      await trx('items').insert({ n: 2 });
      order.push('transaction');
    });
    await entered;
    const reads = [1, 2, 3].map((k) => db('items').count({ c: '*' }).first().then((row) => order.push(`read ${k}: ${Number(row!.c)}`)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order, 'nothing ran while the transaction held the connection').to.deep.equal([]);
    finish();
    await Promise.all([transaction, ...reads]);
    expect(order).to.deep.equal(['transaction', 'read 1: 2', 'read 2: 2', 'read 3: 2']);
  });

  it('hands the connection on after a failed query or a rolled-back transaction', async () => {
    await db('items').insert({ n: 1 });
    const duplicate = await db('items').insert({ n: 1 }).then(() => undefined, (err: Error) => err);
    expect(duplicate?.message).to.match(/UNIQUE constraint failed/);
    const rolledBack = await db
      .transaction(async (trx) => {
        await trx('items').insert({ n: 2 });
        throw new Error('changed my mind');
      })
      .then(() => undefined, (err: Error) => err);
    expect(rolledBack?.message).to.equal('changed my mind');
    expect(await db('items').pluck('n')).to.deep.equal([1]);
  });

  it("hands the connection on once after a stream, which knex releases twice (when it ends and when it closes)", async () => {
    for (let i = 0; i < 20; i++) await db('items').insert({ n: i });
    for (let round = 0; round < 5; round++) {
      const streamed: number[] = [];
      const stream = (async () => {
        for await (const row of db('items').select('n').orderBy('n').stream() as AsyncIterable<{ n: number }>) streamed.push(row.n);
      })();
      // Queued behind the stream: transactions that would fail to begin inside one another if the connection were
      // handed to two of them at once, and reads between them.
      const queued = Array.from({ length: 6 }, (_, k) =>
        k % 2
          ? db('items').count({ c: '*' }).first().then((row) => Number(row!.c))
          : db.transaction(async (trx) => {
              await trx('items').insert({ n: 1000 + round * 10 + k });
              await new Promise((resolve) => setTimeout(resolve, 5));
              await trx('items').where({ n: 1000 + round * 10 + k }).delete();
              return -1;
            }),
      );
      await stream;
      expect(await Promise.all(queued)).to.deep.equal([-1, 20, -1, 20, -1, 20]);
      expect(streamed).to.deep.equal(Array.from({ length: 20 }, (_, i) => i));
    }
    // A stream whose query fails releases twice as well.
    const failed = (async () => {
      for await (const row of db('no_such_table').select('*').stream() as AsyncIterable<unknown>) void row;
    })().then(() => 'streamed', (err: Error) => err.message);
    const after = [db.transaction((trx) => trx('items').insert({ n: 500 })), db.transaction((trx) => trx('items').where({ n: 500 }).delete())];
    expect(await failed).to.match(/no such table/);
    await Promise.all(after);
    expect(Number((await db('items').count({ c: '*' }).first())!.c)).to.equal(20);
  });

  it('on destroy, waits for the transaction that holds the connection and refuses what waits for it', async () => {
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const transaction = db.transaction(async (trx) => {
      inside();
      await new Promise((resolve) => setTimeout(resolve, 50));
      await trx('items').insert({ n: 7 });
    });
    await entered;
    const waiting = db('items').count({ c: '*' }).then(() => 'ran', (err: Error) => err.message);
    await db.destroy();
    await transaction;
    expect(await waiting).to.match(/Unable to acquire a connection/);
    const pool = (db.client as { pool?: PoolCounts }).pool;
    expect(pool, 'knex let go of its pool').to.equal(undefined);
    // The transaction's write reached the file: a new connection reads it.
    const again = knexFactory({ client: 'better-sqlite3', connection: { filename: join(dir, 'db.sqlite') }, useNullAsDefault: true });
    try {
      expect(await again('items').pluck('n')).to.deep.equal([7]);
    } finally {
      await again.destroy();
    }
  });
});
