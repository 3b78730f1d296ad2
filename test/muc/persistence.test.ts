/**
 * Persistent rooms on each database (SQLite, MariaDB, PostgreSQL; TEST_DATABASES narrows): a configured
 * persistent room keeps its options, affiliations, subject, history, MUC/Sub subscribers, its vCard and the
 * service's registered nicks across a server restart, while a temporary room is gone; a persistent room
 * nobody is in rests out of memory and comes back from storage.
 */
import { expect } from 'chai';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { collect, next, stopAll, xml, type Client } from '../support/xmpp.js';
import { NS_DATA, NS_MUC_ADMIN, NS_MUC_OWNER, NS_MUCSUB, SERVICE, configure, enter, errorCondition, groupchat, instantRoom, join, mucConfig, user } from './helpers.js';

const ADMIN = 'admin@localhost:adminpass';

for (const database of testDatabases()) {
  describe(`MUC persistence on ${database.name} (mod_muc)`, () => {
    let t: TestServer;
    let clients: Client[] = [];

    before(async () => {
      const settings = await database.settings('/tmp');
      const config = mucConfig({}, serverSqlConfig(settings));
      // The admin commands act on resting rooms too.
      (config.modules as Record<string, unknown>).mod_muc_admin = {};
      t = await TestServer.start(config);
      await t.bootstrapAdmin();
      for (const name of ['alice', 'bob', 'carol']) await t.server.services.accounts.register(name, 'localhost', `${name}-pw`);
    });
    after(async () => {
      await stopAll(...clients);
      await t?.stop();
      await database.cleanup();
    });

    it('keeps a persistent room across a restart, and forgets a temporary one', async () => {
      const alice = await user(t, 'alice');
      const bob = await user(t, 'bob');
      clients = [alice, bob];
      await enter(alice, 'kept', 'Alice');
      await configure(alice, 'kept', { 'muc#roomconfig_persistentroom': '1', 'muc#roomconfig_roomname': 'Kept Room', 'muc#roomconfig_allow_subscription': '1', 'muc#roomconfig_membersonly': '1' });
      await alice.iqCaller.request(xml('iq', { type: 'set', to: `kept@${SERVICE}` }, xml('query', { xmlns: NS_MUC_ADMIN }, xml('item', { jid: 'bob@localhost', affiliation: 'member' }), xml('item', { jid: 'carol@localhost', affiliation: 'outcast' }))));
      const subject = next(alice, (s) => s.getChildText('subject') === 'Kept subject');
      await alice.send(xml('message', { to: `kept@${SERVICE}`, type: 'groupchat' }, xml('subject', {}, 'Kept subject')));
      await subject;
      for (const body of ['one', 'two']) {
        const echo = next(alice, (s) => s.getChildText('body') === body);
        await alice.send(groupchat('kept', body));
        await echo;
      }
      await bob.iqCaller.request(xml('iq', { type: 'set', to: `kept@${SERVICE}` }, xml('subscribe', { xmlns: NS_MUCSUB, nick: 'Bobby' }, xml('event', { node: 'urn:xmpp:mucsub:nodes:messages' }))));
      await bob.iqCaller.request(xml('iq', { type: 'set', to: SERVICE }, xml('query', { xmlns: 'jabber:iq:register' }, xml('x', { xmlns: NS_DATA, type: 'submit' }, xml('field', { var: 'muc#register_roomnick' }, xml('value', {}, 'Bobby'))))));
      await alice.iqCaller.request(xml('iq', { type: 'set', to: `kept@${SERVICE}` }, xml('vCard', { xmlns: 'vcard-temp' }, xml('FN', {}, 'Kept vCard'))));
      await instantRoom(alice, 'fleeting', 'Alice');
      await stopAll(alice, bob);

      await t.api('restart', {}, { basic: ADMIN });
      let ok = false;
      for (let i = 0; i < 100 && !ok; i++) {
        await new Promise((r) => setTimeout(r, 100));
        ok = (await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN }).catch(() => ({ status: 0 }))).status === 200;
      }
      expect(ok).to.equal(true);

      const alice2 = await user(t, 'alice');
      const bob2 = await user(t, 'bob');
      const carol = await user(t, 'carol');
      clients = [alice2, bob2, carol];
      const info = await bob2.iqCaller.request(xml('iq', { type: 'get', to: `kept@${SERVICE}` }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' })));
      const features = info.getChild('query')!.getChildren('feature').map((f) => f.attrs.var);
      expect(features).to.include.members(['muc_persistent', 'muc_membersonly', NS_MUCSUB]);
      expect(info.getChild('query')!.getChild('identity')!.attrs.name).to.equal('Kept Room');
      expect(errorCondition(await join(carol, 'kept', 'Carol'))).to.equal('forbidden');
      const received = collect(bob2);
      await enter(bob2, 'kept', 'Bob');
      expect(received.filter((s) => s.getChildText('body')).map((s) => s.getChildText('body'))).to.deep.equal(['one', 'two']);
      expect(received.filter((s) => s.getChild('subject')).at(-1)!.getChildText('subject')).to.equal('Kept subject');
      const owners = await alice2.iqCaller.request(xml('iq', { type: 'get', to: `kept@${SERVICE}` }, xml('query', { xmlns: NS_MUC_ADMIN }, xml('item', { affiliation: 'owner' }))));
      expect(owners.getChild('query')!.getChildren('item').map((i) => i.attrs.jid)).to.deep.equal(['alice@localhost']);
      const subs = await bob2.iqCaller.request(xml('iq', { type: 'get', to: SERVICE }, xml('subscriptions', { xmlns: NS_MUCSUB })));
      expect(subs.getChild('subscriptions')!.getChildren('subscription').map((s) => s.attrs.jid)).to.deep.equal([`kept@${SERVICE}`]);
      const card = await carol.iqCaller.request(xml('iq', { type: 'get', to: `kept@${SERVICE}` }, xml('vCard', { xmlns: 'vcard-temp' })));
      expect(card.getChild('vCard', 'vcard-temp')!.getChildText('FN')).to.equal('Kept vCard');
      const registered = await bob2.iqCaller.request(xml('iq', { type: 'get', to: SERVICE }, xml('query', { xmlns: 'jabber:iq:register' })));
      expect(registered.getChild('query')!.getChildText('username')).to.equal('Bobby');
      const gone = next(alice2, (s) => s.is('message') && s.attrs.type === 'error' && s.attrs.from === `fleeting@${SERVICE}`);
      await alice2.send(groupchat('fleeting', 'hello?'));
      expect(errorCondition(await gone)).to.equal('item-not-found');
      // Turning persistence off on an empty room destroys it.
      const left = next(bob2, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === `kept@${SERVICE}/Bob`);
      await bob2.send(xml('presence', { to: `kept@${SERVICE}/Bob`, type: 'unavailable' }));
      await left;
      await configure(alice2, 'kept', { 'muc#roomconfig_persistentroom': '0' });
      const error = await alice2.iqCaller.request(xml('iq', { type: 'get', to: `kept@${SERVICE}` }, xml('query', { xmlns: NS_MUC_OWNER }))).catch((e: { condition?: string }) => e);
      expect((error as { condition?: string }).condition).to.equal('item-not-found');
    });

    it('lets a persistent room nobody is in rest out of memory: listings read it from storage, and it comes back with what was stored', async () => {
      const ok = async (command: string, args: Record<string, unknown>) => {
        const res = await t.api(command, args, { basic: ADMIN });
        expect(res.status, `${command}: ${res.text}`).to.equal(200);
        return JSON.parse(res.text) as any;
      };
      for (let i = 1; i <= 3; i++) {
        const options = [
          { name: 'persistent', value: 'true' },
          { name: 'public', value: i === 3 ? 'false' : 'true' },
          { name: 'title', value: `Resting ${i}` },
        ];
        expect(await ok('create_room_with_opts', { room: `rest${i}`, service: SERVICE, host: 'localhost', options })).to.equal(0);
      }
      // Nobody is in them: they rest, and their options live in storage only. A change made there (as
      // another node or a restore would) is what the room has when it is needed next.
      await t.server.services.storage.db()('muc_rooms').where({ service: SERVICE, name: 'rest2' }).update({ options: JSON.stringify({ persistent: true, public: true, title: 'Changed in storage' }) });
      const listed = (await ok('muc_online_rooms', { service: SERVICE })) as string[];
      expect(listed).to.include.members([`rest1@${SERVICE}`, `rest2@${SERVICE}`, `rest3@${SERVICE}`]);
      expect(await ok('get_room_options', { room: 'rest2', service: SERVICE })).to.deep.include({ name: 'title', value: 'Changed in storage' });
      // disco#items lists the public ones, titled, without bringing them back.
      const alice = await user(t, 'alice');
      clients.push(alice);
      const items = await alice.iqCaller.request(xml('iq', { type: 'get', to: SERVICE }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#items' })));
      const found = items.getChild('query')!.getChildren('item').map((item) => [item.attrs.jid, item.attrs.name]);
      expect(found).to.deep.include.members([
        [`rest1@${SERVICE}`, 'Resting 1'],
        [`rest2@${SERVICE}`, 'Changed in storage'],
      ]);
      expect(found.map(([jid]) => jid)).to.not.include(`rest3@${SERVICE}`);
      // A room comes back for a join with its history, and rests again once its last occupant has left.
      await join(alice, 'rest1', 'Alice');
      const echo = next(alice, (s) => s.getChildText('body') === 'before resting');
      await alice.send(groupchat('rest1', 'before resting'));
      await echo;
      const left = next(alice, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === `rest1@${SERVICE}/Alice`);
      await alice.send(xml('presence', { to: `rest1@${SERVICE}/Alice`, type: 'unavailable' }));
      await left;
      const empty = ((await ok('rooms_empty_list', { service: SERVICE })) as string[]);
      expect(empty, 'a resting room with history is not empty').to.not.include(`rest1@${SERVICE}`);
      expect(empty).to.include(`rest3@${SERVICE}`);
      const history = (await ok('get_room_history', { room: 'rest1', service: SERVICE })) as Array<{ message: string }>;
      expect(history.map((h) => h.message).join()).to.contain('before resting');
      const replayed = next(alice, (s) => s.getChildText('body') === 'before resting' && s.getChild('delay', 'urn:xmpp:delay') !== undefined);
      await join(alice, 'rest1', 'Alice', { history: { maxstanzas: '5' } });
      await replayed;
    });
  });
}
