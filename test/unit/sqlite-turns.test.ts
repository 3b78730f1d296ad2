/**
 * SQLite queries that take turns with the event loop (kernel/src/storage/sqlite-turns.ts), under knex and a
 * real better-sqlite3 database: a long loop of awaited queries lets a timer fire while it runs, where the
 * same loop without it holds the event loop to its end.
 */
import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { turnTakingQueries } from '../../kernel/src/storage/sqlite-turns.js';

/** Runs awaited inserts (one at a time, then in transactions) for `ms`; returns the longest the event loop waited. */
async function longestWaitDuring(db: Knex, ms: number): Promise<{ longest: number; ticks: number }> {
  let last = performance.now();
  let longest = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    ticks++;
  }, 1);
  const end = performance.now() + ms;
  let i = 0;
  while (performance.now() < end) {
    await db('items').insert({ n: i++ });
    if (i % 10 === 0) await db.transaction(async (trx) => trx('items').insert({ n: i++ }));
  }
  const now = performance.now();
  longest = Math.max(longest, now - last);
  clearInterval(timer);
  return { longest, ticks };
}

describe('SQLite queries taking turns with the event loop', () => {
  const open = async (turns: boolean) => {
    const db = knexFactory({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true, pool: { min: 1, max: 1 } });
    await db.schema.createTable('items', (t) => t.integer('n'));
    return turns ? turnTakingQueries(db) : db;
  };

  it('without it, a loop of awaited queries holds the event loop to its end (the problem)', async () => {
    const db = await open(false);
    try {
      const { longest, ticks } = await longestWaitDuring(db, 300);
      expect(ticks).to.be.at.most(1);
      expect(longest).to.be.at.least(300);
    } finally {
      await db.destroy();
    }
  });

  it('with it, timers fire while the loop runs, every few tens of milliseconds at most', async () => {
    const db = await open(true);
    try {
      const { longest, ticks } = await longestWaitDuring(db, 300);
      expect(ticks, 'timer ticks during the loop').to.be.at.least(5);
      expect(longest, 'longest wait of the timer, ms').to.be.below(150);
      expect((await db('items').count({ n: '*' }))[0]!.n).to.be.above(100);
    } finally {
      await db.destroy();
    }
  });
});
