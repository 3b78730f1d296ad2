/**
 * PEP nodes in service discovery (XEP-0163 §8 with XEP-0030 §8) on each database: the account itself sees
 * every node at its bare JID, a contact only the nodes its access model lets it read, and a stranger the
 * same empty answer as for an account that does not exist; a node's items and its info answer those who
 * may read it, and a node nobody has is item-not-found.
 */
import { expect } from 'chai';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { login, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import { NS_DISCO_INFO, befriend, publish, refusal } from './helpers.js';

const NS_DISCO_ITEMS = 'http://jabber.org/protocol/disco#items';
const entry = (text: string) => xml('entry', { xmlns: 'urn:example:journal' }, text);

async function discoItems(client: Client, to: string, node?: string): Promise<Array<{ jid?: string; node?: string; name?: string }>> {
  const answer: Element = await client.iqCaller.request(xml('iq', { type: 'get', to }, xml('query', { xmlns: NS_DISCO_ITEMS, ...(node ? { node } : {}) })), 10_000);
  return answer
    .getChild('query', NS_DISCO_ITEMS)!
    .getChildren('item')
    .map((i) => ({ jid: i.attrs.jid, node: i.attrs.node, name: i.attrs.name }));
}

for (const database of testDatabases()) {
  describe(`PEP nodes in service discovery on ${database.name} (mod_pubsub with mod_disco)`, function () {
    this.timeout(120_000);
    let t: TestServer;
    let alice: Client;
    let bob: Client;
    let eve: Client;

    before(async () => {
      const settings = await database.settings('/tmp');
      t = await TestServer.start({ ...xmppConfig({ mod_pubsub: {}, mod_disco: {}, mod_roster: {}, mod_admin_extra: {} }), ...serverSqlConfig(settings) });
      await t.bootstrapAdmin();
      for (const user of ['alice', 'bob', 'eve']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
      await befriend(t, 'alice', 'bob');
      [alice, bob, eve] = await Promise.all(['alice', 'bob', 'eve'].map((user) => login(t, { user, password: `${user}-pw`, resource: 'r' })));
      await publish(alice, 'urn:example:journal', entry('one'), { id: 'first', publishOptions: { 'pubsub#max_items': '10' } });
      await publish(alice, 'urn:example:journal', entry('two'), { id: 'second', publishOptions: { 'pubsub#max_items': '10' } });
      await publish(alice, 'urn:example:secret', entry('mine'), { id: 'x', publishOptions: { 'pubsub#access_model': 'whitelist' } });
    });
    after(async () => {
      await stopAll(alice, bob, eve);
      await t?.stop();
      await database.cleanup();
    });

    it('lists the nodes at the bare JID as each requester may read them', async () => {
      const nodes = (items: Array<{ node?: string }>) => items.map((i) => i.node).sort();
      expect(nodes(await discoItems(alice, 'alice@localhost'))).to.deep.equal(['urn:example:journal', 'urn:example:secret']);
      expect(nodes(await discoItems(bob, 'alice@localhost'))).to.deep.equal(['urn:example:journal']);
      // A stranger gets what an account that does not exist gets: nothing.
      expect(await discoItems(eve, 'alice@localhost')).to.deep.equal([]);
      expect(await discoItems(eve, 'nobody@localhost')).to.deep.equal([]);
    });

    it("lists a node's items, answers its info, and refuses a node nobody has or the requester may not read", async () => {
      expect((await discoItems(bob, 'alice@localhost', 'urn:example:journal')).map((i) => i.name)).to.have.members(['first', 'second']);
      const info: Element = await bob.iqCaller.request(xml('iq', { type: 'get', to: 'alice@localhost' }, xml('query', { xmlns: NS_DISCO_INFO, node: 'urn:example:journal' })), 10_000);
      const identity = info.getChild('query', NS_DISCO_INFO)!.getChild('identity')!;
      expect(identity.attrs).to.include({ category: 'pubsub', type: 'leaf' });
      expect((await refusal(discoItems(bob, 'alice@localhost', 'urn:example:nothing'))).condition).to.equal('item-not-found');
      expect((await refusal(discoItems(bob, 'alice@localhost', 'urn:example:secret'))).condition).to.not.equal(undefined);
      expect((await refusal(bob.iqCaller.request(xml('iq', { type: 'get', to: 'alice@localhost' }, xml('query', { xmlns: NS_DISCO_INFO, node: 'urn:example:nothing' })), 10_000))).condition).to.equal('item-not-found');
    });
  });
}
