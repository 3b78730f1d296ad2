/**
 * Bookmarks between private storage and PEP (mod_private with mod_pubsub) on each database.
 * bookmarks_to_pep: a client's XEP-0048 bookmarks in private storage become XEP-0402 items on its PEP node,
 * one per room with its name, autojoin, nick and password, on a whitelist node that keeps every item; a
 * second run gives the same node; an account without bookmarks, an unknown account and a server without
 * PEP get an error that names the reason, and change nothing.
 * XEP-0411: bookmarks written to private storage appear on the PEP node `storage:bookmarks` (the account's
 * other clients are notified), bookmarks published there are what private storage answers, and the
 * account's disco#info announces the conversion only while PEP runs.
 */
import { expect } from 'chai';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { login, stopAll, xml, xmppConfig, type Client } from '../support/xmpp.js';
import { ADMIN, NS_BOOKMARKS, NS_DISCO_INFO, NS_OWNER, NS_PUBSUB, announceCaps, api, event, items, ok, publish } from './helpers.js';

const NS_PRIVATE = 'jabber:iq:private';
const NS_CONVERSION = 'urn:xmpp:bookmarks-conversion:0';

async function accountFeatures(client: Client, account: string): Promise<string[]> {
  const answer = await client.iqCaller.request(xml('iq', { type: 'get', to: account }, xml('query', { xmlns: NS_DISCO_INFO })), 10_000);
  return answer.getChild('query', NS_DISCO_INFO)!.getChildren('feature').map((f: { attrs: Record<string, string> }) => f.attrs.var!);
}

async function privateBookmarks(client: Client): Promise<string[]> {
  const answer = await client.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: NS_PRIVATE }, xml('storage', { xmlns: 'storage:bookmarks' }))), 10_000);
  return answer
    .getChild('query', NS_PRIVATE)!
    .getChild('storage', 'storage:bookmarks')!
    .getChildren('conference')
    .map((c: { attrs: Record<string, string> }) => c.attrs.jid!);
}

async function storePrivateBookmarks(client: Client, ...conferences: ReturnType<typeof xml>[]): Promise<void> {
  await client.iqCaller.request(xml('iq', { type: 'set' }, xml('query', { xmlns: NS_PRIVATE }, xml('storage', { xmlns: 'storage:bookmarks' }, ...conferences))), 10_000);
}

for (const database of testDatabases()) {
  describe(`bookmarks_to_pep on ${database.name} (mod_private with mod_pubsub)`, function () {
    this.timeout(120_000);
    let t: TestServer;
    let alice: Client;

    before(async () => {
      const settings = await database.settings('/tmp');
      t = await TestServer.start({ ...xmppConfig({ mod_pubsub: {}, mod_private: {}, mod_disco: {}, mod_roster: {}, mod_admin_extra: {} }), ...serverSqlConfig(settings) });
      await t.bootstrapAdmin();
      await t.server.services.accounts.register('alice', 'localhost', 'alice-pw');
      await t.server.services.accounts.register('bob', 'localhost', 'bob-pw');
      alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'r' });
    });
    after(async () => {
      await stopAll(alice);
      await t?.stop();
      await database.cleanup();
    });

    it('converts each private-storage bookmark to a XEP-0402 item, and a second run gives the same node', async () => {
      await storePrivateBookmarks(
        alice,
        xml('conference', { jid: 'Tea@conference.localhost', name: 'Tea time', autojoin: 'true' }, xml('nick', {}, 'al'), xml('password', {}, 'secret')),
        xml('conference', { jid: 'work@conference.localhost', autojoin: '0' }),
        xml('conference', { jid: 'not a jid@@' }),
      );
      expect(await ok(t, 'bookmarks_to_pep', { user: 'alice', host: 'localhost' })).to.equal('Bookmarks exported to PEP node');

      const read = async () =>
        (await items(alice, 'alice@localhost', NS_BOOKMARKS))
          .map((item) => {
            const c = item.getChild('conference', NS_BOOKMARKS)!;
            return { id: item.attrs.id, name: c.attrs.name, autojoin: c.attrs.autojoin, nick: c.getChildText('nick'), password: c.getChildText('password') };
          })
          .sort((a, b) => a.id!.localeCompare(b.id!));
      const first = await read();
      expect(first).to.deep.equal([
        { id: 'tea@conference.localhost', name: 'Tea time', autojoin: 'true', nick: 'al', password: 'secret' },
        { id: 'work@conference.localhost', name: undefined, autojoin: 'false', nick: null, password: null },
      ]);

      // XEP-0402 §3: the node keeps every bookmark and only its owner reads it.
      const config = await alice.iqCaller.request(xml('iq', { type: 'get', to: 'alice@localhost' }, xml('pubsub', { xmlns: NS_OWNER }, xml('configure', { node: NS_BOOKMARKS }))), 10_000);
      const fields = Object.fromEntries(
        config
          .getChild('pubsub', NS_OWNER)!
          .getChild('configure')!
          .getChild('x', 'jabber:x:data')!
          .getChildren('field')
          .map((f) => [f.attrs.var, f.getChildText('value')]),
      );
      expect(fields['pubsub#access_model']).to.equal('whitelist');

      expect(await ok(t, 'bookmarks_to_pep', { user: 'alice', host: 'localhost' })).to.equal('Bookmarks exported to PEP node');
      expect(await read()).to.deep.equal(first);
    });

    it('XEP-0411: private-storage bookmarks appear on the PEP node, notify the other clients, and PEP bookmarks are what private storage answers', async () => {
      expect(await accountFeatures(alice, 'alice@localhost')).to.include(NS_CONVERSION);
      const other = await login(t, { user: 'alice', password: 'alice-pw', resource: 'phone' });
      try {
        await announceCaps(other, ['storage:bookmarks+notify']);
        const notified = event(other, 'alice@localhost', 'storage:bookmarks');
        await storePrivateBookmarks(alice, xml('conference', { jid: 'lounge@conference.localhost', name: 'Lounge' }));
        const item = (await notified).getChild('event', 'http://jabber.org/protocol/pubsub#event')!.getChild('items')!.getChild('item')!;
        expect(item.attrs.id).to.equal('current');
        expect(item.getChild('storage', 'storage:bookmarks')!.getChild('conference')!.attrs.jid).to.equal('lounge@conference.localhost');
        const [stored] = await items(alice, 'alice@localhost', 'storage:bookmarks');
        expect(stored!.getChild('storage', 'storage:bookmarks')!.getChild('conference')!.attrs.name).to.equal('Lounge');

        // The other way: a PEP client publishes, a private-storage client reads the same bookmarks.
        await publish(other, 'storage:bookmarks', xml('storage', { xmlns: 'storage:bookmarks' }, xml('conference', { jid: 'garden@conference.localhost' }), xml('conference', { jid: 'lounge@conference.localhost' })), {
          id: 'current',
          publishOptions: { 'pubsub#persist_items': 'true', 'pubsub#access_model': 'whitelist' },
        });
        expect((await privateBookmarks(alice)).sort()).to.deep.equal(['garden@conference.localhost', 'lounge@conference.localhost']);
      } finally {
        await stopAll(other);
      }
    });

    it('XEP-0402: a bookmark published or retracted there is carried to the XEP-0048 node and to private storage', async () => {
      expect(await accountFeatures(alice, 'alice@localhost')).to.include('http://jabber.org/protocol/pubsub#config-node-max');
      await publish(alice, NS_BOOKMARKS, xml('conference', { xmlns: NS_BOOKMARKS, name: 'Attic', autojoin: 'true' }, xml('nick', {}, 'al')), {
        id: 'attic@conference.localhost',
        publishOptions: { 'pubsub#persist_items': 'true', 'pubsub#max_items': 'max', 'pubsub#send_last_published_item': 'never', 'pubsub#access_model': 'whitelist' },
      });
      expect(await privateBookmarks(alice)).to.include('attic@conference.localhost');
      const [legacy] = await items(alice, 'alice@localhost', 'storage:bookmarks');
      const attic = legacy!
        .getChild('storage', 'storage:bookmarks')!
        .getChildren('conference')
        .find((c: { attrs: Record<string, string> }) => c.attrs.jid === 'attic@conference.localhost');
      expect(attic?.attrs).to.include({ name: 'Attic', autojoin: 'true' });
      expect(attic?.getChildText('nick')).to.equal('al');

      await alice.iqCaller.request(xml('iq', { type: 'set' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('retract', { node: NS_BOOKMARKS, notify: 'true' }, xml('item', { id: 'attic@conference.localhost' })))), 10_000);
      expect(await privateBookmarks(alice)).to.not.include('attic@conference.localhost');
      // And private storage's other bookmarks are still the XEP-0402 items (one place, three views).
      const rooms = (await items(alice, 'alice@localhost', NS_BOOKMARKS)).map((i) => i.attrs.id).sort();
      expect(rooms).to.deep.equal((await privateBookmarks(alice)).sort());
    });

    it('refuses an account without bookmarks and an unknown account, naming the reason', async () => {
      const none = await api(t, 'bookmarks_to_pep', { user: 'bob', host: 'localhost' });
      expect(none.status).to.be.within(400, 499);
      expect(JSON.stringify(none.body)).to.match(/bob@localhost has no bookmarks in private storage/);
      const unknown = await api(t, 'bookmarks_to_pep', { user: 'nobody', host: 'localhost' });
      expect(unknown.status).to.equal(404);
      expect(JSON.stringify(unknown.body)).to.match(/nobody@localhost does not exist/);
      // Nothing was created for bob.
      const bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'r' });
      try {
        const answer = await bob.iqCaller.request(xml('iq', { type: 'get', to: 'bob@localhost' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('items', { node: NS_BOOKMARKS }))), 10_000).catch((err: { condition?: string }) => err);
        expect((answer as { condition?: string }).condition).to.equal('item-not-found');
      } finally {
        await stopAll(bob);
      }
    });
  });
}

describe('bookmarks_to_pep without PEP (mod_private alone)', function () {
  this.timeout(60_000);
  let t: TestServer;

  before(async () => {
    t = await TestServer.start(xmppConfig({ mod_private: {}, mod_disco: {}, mod_admin_extra: {} }));
    await t.bootstrapAdmin();
    await t.server.services.accounts.register('carol', 'localhost', 'carol-pw');
  });
  after(async () => {
    await t?.stop();
  });

  it('announces no bookmarks conversion', async () => {
    const carol = await login(t, { user: 'carol', password: 'carol-pw', resource: 'r' });
    try {
      expect(await accountFeatures(carol, 'carol@localhost')).to.not.include(NS_CONVERSION);
    } finally {
      await stopAll(carol);
    }
  });

  it('says that PEP is not enabled', async () => {
    const res = await t.api('bookmarks_to_pep', { user: 'carol', host: 'localhost' }, { basic: ADMIN });
    expect(res.status).to.be.within(400, 499);
    expect(res.text).to.match(/PEP is not enabled: bookmarks_to_pep needs mod_pubsub/);
  });
});
