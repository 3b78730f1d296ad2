/**
 * preparedRead on each database (SQLite through the kernel's Storage, MariaDB, PostgreSQL): the rows knex's own
 * query gives, for many runs with new values (text, numbers, a LIMIT, a value used twice, constants knex compiled in),
 * `first` and `all`, no row; inside a transaction it reads the transaction's writes; on SQLite, a read waits while
 * another transaction holds the connection; anything but a select is refused.
 */
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createLogger } from '../../kernel/src/log/logger.js';
import { Storage } from '../../kernel/src/storage/database.js';
import { preparedRead } from '@service/plugin-api';
import { testDatabases } from '../support/databases.js';

const logger = createLogger({ level: 'none' });
const TABLE = 'prepared_read_items';

interface Item {
  host: string;
  name: string;
  position: number;
  flag: boolean | number;
}

const byName = preparedRead<'host' | 'name', Item>((db, p) => db(TABLE).first('*').where({ host: p('host'), name: p('name') }));
const page = preparedRead<'host' | 'after' | 'limit', { name: string; position: number }>((db, p) =>
  db(TABLE).select('name', 'position').where({ host: p('host'), flag: true }).where('position', '>', p('after')).orderBy('position').limit(p.count('limit')),
);
const twice = preparedRead<'name', { name: string }>((db, p) => db(TABLE).select('name').where('name', p('name')).orWhere('host', p('name')).orderBy('name'));

for (const database of testDatabases()) {
  describe(`preparedRead on ${database.name}`, function () {
    let dataDir: string;
    let storage: Storage;
    let db: Knex;

    before(async () => {
      dataDir = await mkdtemp(path.join(tmpdir(), `svc-prepared-${database.name}-`));
      storage = await Storage.open({ sql: await database.settings(dataDir), dataDir, defaultDb: 'sql' }, logger);
      db = storage.db();
      await db.schema.dropTableIfExists(TABLE);
      await db.schema.createTable(TABLE, (t) => {
        t.string('host', 100).notNullable();
        t.string('name', 100).notNullable();
        t.integer('position').notNullable();
        t.boolean('flag').notNullable();
        t.primary(['host', 'name']);
      });
      const rows = [];
      for (const host of ['a.example', 'b.example']) {
        for (let i = 0; i < 30; i++) rows.push({ host, name: `${host}-${i}`, position: i, flag: i % 3 !== 0 });
      }
      await db(TABLE).insert(rows);
    });

    after(async () => {
      await db.schema.dropTableIfExists(TABLE).catch(() => undefined);
      await storage.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    it("gives knex's own rows for one value after another", async () => {
      for (const host of ['a.example', 'b.example']) {
        for (const i of [0, 7, 29]) {
          const name = `${host}-${i}`;
          const got = await byName.first(db, { host, name });
          expect(got).to.deep.equal(await db(TABLE).first('*').where({ host, name }));
          expect(got?.position).to.equal(i);
        }
      }
      expect(await byName.first(db, { host: 'a.example', name: 'nobody' })).to.equal(undefined);
      expect(await byName.all(db, { host: 'c.example', name: 'a.example-1' })).to.deep.equal([]);
    });

    it('takes a LIMIT and numbers as values, beside a constant knex compiled in', async () => {
      for (const [after, limit] of [[-1, 5], [10, 3], [25, 10], [29, 4]] as const) {
        const got = await page.all(db, { host: 'b.example', after, limit });
        const expected = await db(TABLE).select('name', 'position').where({ host: 'b.example', flag: true }).where('position', '>', after).orderBy('position').limit(limit);
        expect(got, `after ${after}, limit ${limit}`).to.deep.equal(expected);
        expect(got.length).to.be.at.most(limit);
      }
      expect((await page.all(db, { host: 'a.example', after: -1, limit: 4 })).map((r) => r.position)).to.deep.equal([1, 2, 4, 5]);
    });

    it('puts a value used twice in both places', async () => {
      expect(await twice.all(db, { name: 'a.example-3' })).to.deep.equal([{ name: 'a.example-3' }]);
      expect((await twice.all(db, { name: 'b.example' })).length).to.equal(30);
    });

    it("reads a transaction's own writes inside it, and refuses a missing value", async () => {
      await db.transaction(async (trx) => {
        await trx(TABLE).insert({ host: 'a.example', name: 'fresh', position: 100, flag: true });
        expect((await byName.first(trx, { host: 'a.example', name: 'fresh' }))?.position).to.equal(100);
        await trx(TABLE).where({ host: 'a.example', name: 'fresh' }).delete();
      });
      expect(await byName.first(db, { host: 'a.example', name: 'fresh' })).to.equal(undefined);
      const missing = await byName.first(db, { host: 'a.example' } as { host: string; name: string }).then(() => undefined, (err: Error) => err.message);
      expect(missing).to.match(/a value is missing/);
    });

    if (database.name === 'sqlite') {
      it('waits while another transaction holds the connection, then reads what it committed', async () => {
        let inside!: () => void;
        const entered = new Promise<void>((resolve) => (inside = resolve));
        const transaction = db.transaction(async (trx) => {
          await trx(TABLE).where({ host: 'a.example', name: 'a.example-1' }).update({ position: 500 });
          inside();
          await new Promise((resolve) => setTimeout(resolve, 30));
        });
        await entered;
        const read = await byName.first(db, { host: 'a.example', name: 'a.example-1' });
        await transaction;
        expect(read?.position).to.equal(500);
        await db(TABLE).where({ host: 'a.example', name: 'a.example-1' }).update({ position: 1 });
      });
    }

    it('refuses anything but a select when it compiles', async () => {
      const write = preparedRead<'name', never>((k, p) => k(TABLE).where({ name: p('name') }).delete() as unknown as Knex.QueryBuilder);
      const refused = await write.all(db, { name: 'x' }).then(() => undefined, (err: Error) => err.message);
      expect(refused).to.match(/preparedRead takes a select, not a del/);
      expect(Number((await db(TABLE).count({ n: '*' }))[0]!.n)).to.equal(60);
    });
  });
}
