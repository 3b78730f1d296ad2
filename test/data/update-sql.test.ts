/**
 * update_sql (issue 19) on SQLite, MariaDB and PostgreSQL: a running server with clients connected, whose
 * databases are put back to an older schema under it (two modules' later migrations undone, one in the SQL
 * store and one in the embedded store: their tables
 * dropped and their bookkeeping rows deleted, as a restore of an older dump would leave it). update_sql,
 * called through servicectl's control socket, applies exactly those migrations with progress and a log line
 * per module, keeps the data, and the modules work on the new tables; a second run has nothing to do. A
 * migration that cannot apply (its table is there but not recorded) fails with a message naming it, not a
 * 500, and changes nothing.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { overControlSocket } from '../support/cli.js';
import { api } from '../support/admin-api.js';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { login, next, stopAll, subscribe, xml, xmppConfig, type Client } from '../support/xmpp.js';

/** mod_mam keeps its tables in the embedded store: update_sql covers both stores. */
const MODULES = { mod_roster: { versioning: true }, mod_presence: {}, mod_mam: { db_type: 'mnesia' } };
/** The later migrations undone, with the table each creates and the store it is in. */
const UNDONE = [
  { owner: 'mod_roster', id: '003_roster_versions', table: 'roster_versions', store: 'sql' },
  { owner: 'mod_mam', id: '002_mam_prefs', table: 'mam_prefs', store: 'mnesia' },
] as const;

for (const database of testDatabases()) {
  describe(`update_sql on ${database.name}`, function () {
    this.timeout(120_000);
    let t: TestServer;
    let alice: Client | undefined;
    let bob: Client | undefined;
    const db = () => t.server.services.storage.db('sql');
    const store = (kind: 'sql' | 'mnesia') => t.server.services.storage.db(kind);
    const recorded = async (owner: string, id: string, kind: 'sql' | 'mnesia' = 'sql') => (await store(kind)('schema_migrations').where({ owner, id })).length === 1;
    const rosterOf = async (client: Client) =>
      (await client.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: 'jabber:iq:roster' })))).getChild('query')!.getChildren('item');

    before(async () => {
      const settings = await database.settings('/tmp');
      t = await TestServer.start({ ...xmppConfig(MODULES), ...serverSqlConfig(settings) });
      await t.bootstrapAdmin();
      await t.register('alice', 'localhost', 'alice-pw');
      await t.register('bob', 'localhost', 'bob-pw');
      alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'a' });
      bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b' });
      await Promise.all([alice.send(xml('presence')), bob.send(xml('presence'))]);
      await subscribe(bob, 'bob@localhost', alice, 'alice@localhost');
      await subscribe(alice, 'alice@localhost', bob, 'bob@localhost');
    });
    after(async () => {
      await stopAll(alice, bob);
      await t?.stop();
      await database.cleanup();
    });

    it('with nothing to do, says so and changes nothing', async () => {
      const mark = t.logs.length;
      const { progress, final } = await overControlSocket(t, 'update_sql');
      expect(final.type, JSON.stringify(final)).to.equal('result');
      expect(progress.at(-1)).to.deep.include({ done: 0, total: 0 });
      expect(t.logs.slice(mark).map((l) => l.msg)).to.include('update_sql: nothing to do, every store is at the current schema');
      expect(t.logs.slice(mark).filter((l) => l.msg === 'database migrations applied')).to.deep.equal([]);
    });

    it('brings an older schema to the current one, reporting per module, with the data kept and clients connected', async () => {
      const itemsBefore = await db()('roster_items').where({ host: 'localhost' }).orderBy(['username', 'jid']);
      expect(itemsBefore.length).to.equal(2);
      for (const { owner, id, table, store: kind } of UNDONE) {
        await store(kind).schema.dropTable(table);
        await store(kind)('schema_migrations').where({ owner, id }).delete();
      }

      const mark = t.logs.length;
      const { progress, final } = await overControlSocket(t, 'update_sql');
      expect(final.type, JSON.stringify(final)).to.equal('result');
      expect(progress.at(-1)).to.deep.include({ done: 2, total: 2 });
      expect(progress.every((p, i) => i === 0 || p.done >= progress[i - 1]!.done)).to.equal(true);
      const said = t.logs.slice(mark).filter((l) => /^update_sql applied /.test(String(l.msg)));
      expect(said.map((l) => ({ owner: l.owner, migrations: l.migrations, store: l.store }))).to.deep.equal(
        UNDONE.map(({ owner, id, store: kind }) => ({ owner, migrations: [id], store: kind })),
      );
      for (const { owner, id, table, store: kind } of UNDONE) {
        expect(await store(kind).schema.hasTable(table), table).to.equal(true);
        expect(await recorded(owner, id, kind), `${owner}/${id} recorded`).to.equal(true);
      }
      expect(await db()('roster_items').where({ host: 'localhost' }).orderBy(['username', 'jid'])).to.deep.equal(itemsBefore);

      // The connected clients go on, on the new tables: a roster change (with its version) reaches alice.
      const pushed = next(alice!, (s) => s.is('iq') && s.attrs.type === 'set' && s.getChild('query', 'jabber:iq:roster')?.getChild('item')?.attrs.name === 'Bobby');
      await alice!.iqCaller.request(xml('iq', { type: 'set' }, xml('query', { xmlns: 'jabber:iq:roster' }, xml('item', { jid: 'bob@localhost', name: 'Bobby' }))));
      await pushed;
      expect((await rosterOf(alice!)).find((i) => i.attrs.jid === 'bob@localhost')?.attrs.subscription).to.equal('both');
      expect(await db()('roster_versions').where({ host: 'localhost', username: 'alice' })).to.have.length(1);
      await alice!.iqCaller.request(xml('iq', { type: 'set' }, xml('prefs', { xmlns: 'urn:xmpp:mam:2', default: 'roster' })));
      const prefs = await alice!.iqCaller.request(xml('iq', { type: 'get' }, xml('prefs', { xmlns: 'urn:xmpp:mam:2' })));
      expect(prefs.getChild('prefs')?.attrs.default).to.equal('roster');
      expect(await store('mnesia')('mam_prefs').where({ host: 'localhost', username: 'alice' })).to.have.length(1);
    });

    it('a second run has nothing to do', async () => {
      const mark = t.logs.length;
      const { progress, final } = await overControlSocket(t, 'update_sql');
      expect(final.type).to.equal('result');
      expect(progress.at(-1)).to.deep.include({ done: 0, total: 0 });
      expect(t.logs.slice(mark).map((l) => l.msg)).to.include('update_sql: nothing to do, every store is at the current schema');
      expect(t.logs.slice(mark).filter((l) => /^update_sql applied /.test(String(l.msg)))).to.deep.equal([]);
    });

    it('fails clearly on a migration that cannot apply, and changes nothing', async () => {
      // The table is there (with alice's version) but its migration is not recorded: creating it again fails.
      await db()('schema_migrations').where({ owner: 'mod_roster', id: '003_roster_versions' }).delete();
      const versions = await db()('roster_versions').orderBy('username');
      const res = await api(t, 'update_sql', {});
      expect(res.status, JSON.stringify(res.body)).to.equal(422);
      expect(res.body.message).to.contain('mod_roster/003_roster_versions').and.to.contain('nothing was applied');
      expect(await recorded('mod_roster', '003_roster_versions')).to.equal(false);
      expect(await db()('roster_versions').orderBy('username')).to.deep.equal(versions);
      expect((await rosterOf(alice!)).map((i) => i.attrs.jid)).to.include('bob@localhost');
      // Put the record back, as an operator would: then there is nothing to do.
      await db()('schema_migrations').insert({ owner: 'mod_roster', id: '003_roster_versions', applied_at: Date.now() });
      expect((await overControlSocket(t, 'update_sql')).final.type).to.equal('result');
    });

    it('takes no arguments', async () => {
      const res = await api(t, 'update_sql', { host: 'localhost' });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.message).to.contain('host');
    });
  });
}
