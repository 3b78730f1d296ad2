/**
 * The server on each database (SQLite, MariaDB, PostgreSQL): the same schema, the same answers through
 * the HTTP API, and data that survives a restart.
 */
import { expect } from 'chai';
import { baseConfig, serverSqlConfig, TestServer } from '../support/server.js';
import { testDatabases } from '../support/databases.js';

const ADMIN = 'admin@localhost:adminpass';

for (const database of testDatabases()) {
  describe(`server on ${database.name}`, () => {
    let t: TestServer;

    before(async () => {
      const settings = await database.settings('/tmp');
      const config = { ...baseConfig(), ...serverSqlConfig(settings) };
      t = await TestServer.start(config);
      await t.bootstrapAdmin();
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    it('registers accounts and lists them sorted', async () => {
      for (const user of ['zoe', 'Émile', 'bob']) {
        const res = await t.api('register', { user, host: 'localhost', password: `${user}-pw` }, { basic: ADMIN });
        expect(res.status, res.text).to.equal(200);
      }
      await t.api('register', { user: 'other', host: 'example.com', password: 'pw' }, { basic: ADMIN });
      const res = await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN });
      expect(res.body).to.deep.equal(['admin', 'bob', 'zoe', 'émile']);
      expect((await t.api('registered_users', { host: 'example.com' }, { basic: ADMIN })).body).to.deep.equal(['other']);
    });

    it('answers 409 to a second registration, also under another case', async () => {
      const res = await t.api('register', { user: 'ZOE', host: 'LocalHost', password: 'x' }, { basic: ADMIN });
      expect(res.status).to.equal(409);
      expect(res.body.message).to.match(/zoe@localhost already exists/);
    });

    it('authenticates with the stored password', async () => {
      expect((await t.api('status', {}, { basic: 'zoe@localhost:zoe-pw' })).status).to.equal(200);
      expect((await t.api('status', {}, { basic: 'zoe@localhost:nope' })).status).to.equal(401);
    });

    it('unregisters, and the account can no longer log in', async () => {
      expect((await t.api('unregister', { user: 'zoe', host: 'localhost' }, { basic: ADMIN })).status).to.equal(200);
      expect((await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN })).body).to.deep.equal(['admin', 'bob', 'émile']);
      expect((await t.api('status', {}, { basic: 'zoe@localhost:zoe-pw' })).status).to.equal(401);
      const again = await t.api('unregister', { user: 'zoe', host: 'localhost' }, { basic: ADMIN });
      expect(again.status).to.equal(404);
      expect(again.body.message).to.match(/zoe@localhost/);
    });

    it('keeps the data across a restart', async () => {
      await t.api('restart', {}, { basic: ADMIN });
      let users: unknown;
      for (let i = 0; i < 50 && !Array.isArray(users); i++) {
        await new Promise((r) => setTimeout(r, 100));
        users = (await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN }).catch(() => ({ body: undefined }))).body;
      }
      expect(users).to.deep.equal(['admin', 'bob', 'émile']);
    });
  });
}
