/**
 * The purge commands of mod_pubsub on each database: delete_expired_pubsub_items removes the items older
 * than their node's pubsub#item_expire (which are never served even before the purge), and leaves nodes
 * without item_expire alone; delete_old_pubsub_items keeps the newest `number` items of every node and
 * refuses a negative number.
 */
import { expect } from 'chai';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { login, stopAll, xml, xmppConfig, type Client } from '../support/xmpp.js';
import { api, items, ok, publish } from './helpers.js';

const entry = (text: string) => xml('entry', { xmlns: 'urn:example:journal' }, text);

for (const database of testDatabases()) {
  describe(`PubSub purge commands on ${database.name} (mod_pubsub)`, function () {
    this.timeout(120_000);
    let t: TestServer;
    let alice: Client;

    before(async () => {
      const settings = await database.settings('/tmp');
      t = await TestServer.start({ ...xmppConfig({ mod_pubsub: {}, mod_roster: {}, mod_admin_extra: {} }), ...serverSqlConfig(settings) });
      await t.bootstrapAdmin();
      await t.server.services.accounts.register('alice', 'localhost', 'alice-pw');
      alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'r' });
    });
    after(async () => {
      await stopAll(alice);
      await t?.stop();
      await database.cleanup();
    });

    it('delete_expired_pubsub_items removes what item_expire says has expired, which was no longer served', async () => {
      for (const n of [1, 2, 3]) await publish(alice, 'urn:example:expiring', entry(`e${n}`), { id: `e${n}`, publishOptions: { 'pubsub#max_items': '10', 'pubsub#item_expire': '3600' } });
      for (const n of [1, 2]) await publish(alice, 'urn:example:kept', entry(`k${n}`), { id: `k${n}`, publishOptions: { 'pubsub#max_items': '10' } });
      const db = t.server.services.storage.db();
      // e1 and e2 were published two hours ago; every item of the node without item_expire too.
      const old = Date.now() - 2 * 3600_000;
      await db('pubsub_items').whereIn('item_id', ['e1', 'e2', 'k1', 'k2']).update({ updated_at: old });
      expect((await items(alice, 'alice@localhost', 'urn:example:expiring')).map((i) => i.attrs.id)).to.deep.equal(['e3']);
      expect(await db('pubsub_items').whereIn('item_id', ['e1', 'e2'])).to.have.length(2);
      expect(await ok(t, 'delete_expired_pubsub_items', {})).to.equal(0);
      expect((await db('pubsub_items').select('item_id')).map((r: { item_id: string }) => r.item_id).sort()).to.deep.equal(['e3', 'k1', 'k2']);
    });

    it('delete_old_pubsub_items keeps the newest NUMBER items of every node', async () => {
      for (const n of [1, 2, 3, 4]) await publish(alice, 'urn:example:many', entry(`m${n}`), { id: `m${n}`, publishOptions: { 'pubsub#max_items': '10' } });
      expect(await ok(t, 'delete_old_pubsub_items', { number: 2 })).to.equal(0);
      expect((await items(alice, 'alice@localhost', 'urn:example:many')).map((i) => i.attrs.id)).to.deep.equal(['m4', 'm3']);
      expect((await items(alice, 'alice@localhost', 'urn:example:kept')).map((i) => i.attrs.id)).to.deep.equal(['k2', 'k1']);
      const refused = await api(t, 'delete_old_pubsub_items', { number: -1 });
      expect(refused.status).to.equal(400);
    });
  });
}
