/**
 * insertRows on each database: more rows than one SQLite statement takes (500 compound SELECT terms), more
 * bound values than SQLite (32 766) or PostgreSQL (65 535) take, all stored in order; inside the caller's
 * transaction, and all or nothing on its own.
 */
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createLogger } from '../../kernel/src/log/logger.js';
import { Storage } from '../../kernel/src/storage/database.js';
import { insertRows } from '@service/plugin-api';
import { testDatabases } from '../support/databases.js';
import { rejectionOf } from '../support/rejection.js';

const logger = createLogger({ level: 'none' });
const NARROW = 'insert_rows_narrow';
const WIDE = 'insert_rows_wide';
const WIDE_COLUMNS = 100;

const failure = (promise: Promise<unknown>) => rejectionOf(promise);

function narrowRows(count: number, from = 0): Array<{ position: number; name: string; note?: string }> {
  // Every other row leaves `note` out: knex binds the union of the columns in every row of a statement.
  return Array.from({ length: count }, (_, i) => (i % 2 ? { position: from + i, name: `row ${from + i}` } : { position: from + i, name: `row ${from + i}`, note: 'n' }));
}

for (const database of testDatabases()) {
  describe(`insertRows on ${database.name}`, function () {
    let dataDir: string;
    let storage: Storage;
    let db: Knex;
    const positions = async (table: string) => ((await db(table).select('position').orderBy('id')) as Array<{ position: number | string }>).map((r) => Number(r.position));

    before(async () => {
      dataDir = await mkdtemp(path.join(tmpdir(), `svc-insert-rows-${database.name}-`));
      storage = await Storage.open({ sql: await database.settings(dataDir), dataDir, defaultDb: 'sql' }, logger);
      db = storage.db();
      await db.schema.createTable(NARROW, (t) => {
        t.increments('id');
        t.integer('position').notNullable().unique();
        t.string('name', 50).notNullable();
        t.string('note', 10);
      });
      await db.schema.createTable(WIDE, (t) => {
        t.increments('id');
        t.integer('position').notNullable();
        for (let c = 1; c < WIDE_COLUMNS; c++) t.integer(`c${c}`).notNullable();
      });
    });
    beforeEach(async () => {
      await db(NARROW).delete();
      await db(WIDE).delete();
    });
    after(async () => {
      await storage?.close();
      await database.cleanup();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('stores more rows than one SQLite compound SELECT holds, in order', async () => {
      if (database.name === 'sqlite') {
        // What it is for: knex's own insert of 501 rows is one statement SQLite refuses.
        expect((await failure(db(NARROW).insert(narrowRows(501)))).message).to.match(/too many terms in compound SELECT/);
      }
      await insertRows(db, NARROW, narrowRows(1_201));
      expect(await positions(NARROW)).to.deep.equal([...Array(1_201).keys()]);
      const notes = (await db(NARROW).select('note').orderBy('id')) as Array<{ note: string | null }>;
      expect(notes.filter((r) => r.note === 'n')).to.have.length(601);
      expect(notes.filter((r) => r.note === null)).to.have.length(600);
    });

    it('stores more bound values than SQLite or PostgreSQL take in one statement', async () => {
      // 22 000 rows × 3 columns, each with a value: 66 000 values, past both limits.
      const many = narrowRows(22_000).map((row) => ({ ...row, note: 'n' }));
      if (database.name === 'pgsql') {
        // PostgreSQL's protocol counts a statement's parameters in 16 bits.
        expect((await failure(db(NARROW).insert(many))).message).to.match(/bind message has \d+ parameter formats but 0 parameters/);
      }
      await insertRows(db, NARROW, many);
      expect(await positions(NARROW)).to.deep.equal([...Array(22_000).keys()]);
      // 400 rows × 100 columns: 40 000 values in fewer than 500 rows, past SQLite's variable limit.
      const wide = Array.from({ length: 400 }, (_, i) => Object.fromEntries([['position', i], ...Array.from({ length: WIDE_COLUMNS - 1 }, (_, c) => [`c${c + 1}`, c])]));
      await insertRows(db, WIDE, wide);
      expect(await positions(WIDE)).to.deep.equal([...Array(400).keys()]);
      const [row] = (await db(WIDE).where({ position: 399 })) as Array<Record<string, number | string>>;
      expect(Number(row![`c${WIDE_COLUMNS - 1}`])).to.equal(WIDE_COLUMNS - 2);
    });

    it("runs in the caller's transaction: its rollback takes the rows back", async () => {
      await db(NARROW).insert({ position: -1, name: 'before' });
      const err = await failure(
        db.transaction(async (trx) => {
          await trx(NARROW).where({ position: -1 }).delete();
          await insertRows(trx, NARROW, narrowRows(1_100));
          expect(await trx(NARROW).count({ n: '*' }).first()).to.satisfy((r: { n: number | string }) => Number(r.n) === 1_100);
          throw new Error('rolled back');
        }),
      );
      expect(err.message).to.equal('rolled back');
      expect(await positions(NARROW)).to.deep.equal([-1]);
    });

    it('stores all rows or none without a transaction, as one statement would', async () => {
      // Row 1 000 repeats the first position: the statement for the third chunk fails.
      const rows = narrowRows(1_100);
      rows[1_000] = { position: 0, name: 'duplicate' };
      await failure(insertRows(db, NARROW, rows));
      expect(await positions(NARROW)).to.deep.equal([]);
    });

    it('does nothing for no rows', async () => {
      await insertRows(db, NARROW, []);
      expect(await positions(NARROW)).to.deep.equal([]);
    });
  });
}
