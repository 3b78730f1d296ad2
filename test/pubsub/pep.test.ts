/**
 * Personal eventing (mod_pubsub, XEP-0163) with real clients, on each database: publishing auto-creates
 * the node and answers the item id; owners and contacts with a presence subscription retrieve items
 * (newest first, max_items, by id) and strangers are refused with XEP-0060's conditions; notifications go
 * to the owner's resources and subscribed contacts whose verified caps ask `+notify`, never to a client
 * whose caps hash does not match its features; the last item follows a contact's first presence, new caps
 * and a subscription granted; publish-options create nodes (OMEMO's open access) and are preconditions on
 * existing ones; retract, configure, purge and delete with their notifications; bookmarks (XEP-0402, and
 * XEP-0048's storage:bookmarks node); every error a client can cause; the removal of an account's nodes
 * with the account.
 */
import { expect } from 'chai';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { expectSilence, login, stopAll, subscribe, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import {
  NS_AVATAR_METADATA,
  NS_BOOKMARKS,
  NS_EVENT,
  NS_NICK,
  NS_OMEMO_DEVICES,
  NS_OWNER,
  NS_PUBSUB,
  announceCaps,
  befriend,
  event,
  items,
  ok,
  publish,
  refusal,
} from './helpers.js';

const nick = (name: string) => xml('nick', { xmlns: NS_NICK }, name);
const devices = (...ids: number[]) => xml('list', { xmlns: 'eu.siacs.conversations.axolotl' }, ...ids.map((id) => xml('device', { id: String(id) })));
const NOTIFY = [`${NS_NICK}+notify`, 'urn:example:feed+notify', `${NS_AVATAR_METADATA}+notify`, `${NS_OMEMO_DEVICES}+notify`, `${NS_BOOKMARKS}+notify`];

for (const database of testDatabases()) {
  describe(`PEP on ${database.name} (mod_pubsub, XEP-0163)`, function () {
    this.timeout(120_000);
    let t: TestServer;
    let alice: Client;
    let alice2: Client;
    let bob: Client;
    let carol: Client;

    before(async () => {
      const settings = await database.settings('/tmp');
      t = await TestServer.start({ ...xmppConfig({ mod_pubsub: {}, mod_roster: {}, mod_presence: {}, mod_disco: {}, mod_admin_extra: {} }), ...serverSqlConfig(settings) });
      await t.bootstrapAdmin();
      for (const user of ['alice', 'bob', 'carol', 'dave', 'gone']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
      await befriend(t, 'alice', 'bob');
      await befriend(t, 'alice', 'dave', ['friends']);
      alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'desk' });
      alice2 = await login(t, { user: 'alice', password: 'alice-pw', resource: 'old' });
      bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'phone' });
      carol = await login(t, { user: 'carol', password: 'carol-pw', resource: 'pc' });
      await announceCaps(alice, NOTIFY);
      // alice's second client supports PEP but asks for no notifications.
      await announceCaps(alice2, []);
      // The same client software as alice's: the server knows these caps and does not ask again.
      await announceCaps(bob, NOTIFY, { expectQuery: false });
      await announceCaps(carol, NOTIFY, { expectQuery: false });
    });
    after(async () => {
      await stopAll(alice, alice2, bob, carol);
      await t?.stop();
      await database.cleanup();
    });

    it('announces PEP on the account (disco#info identity pubsub/pep)', async () => {
      const info = await alice.iqCaller.request(xml('iq', { type: 'get', to: 'alice@localhost' }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' })));
      const query = info.getChild('query')!;
      expect(query.getChildren('identity').some((i) => i.attrs.category === 'pubsub' && i.attrs.type === 'pep')).to.equal(true);
      const features = query.getChildren('feature').map((f) => f.attrs.var);
      expect(features).to.include.members([NS_PUBSUB, `${NS_PUBSUB}#publish-options`, `${NS_PUBSUB}#auto-create`, `${NS_PUBSUB}#filtered-notifications`]);
    });

    it('auto-creates on publish, notifies the owner and subscribed contacts that +notify, and nobody else', async () => {
      const silentOld = expectSilence(alice2, (s) => s.getChild('event', NS_EVENT) !== undefined, 'a notification to a client without +notify');
      const silentCarol = expectSilence(carol, (s) => s.getChild('event', NS_EVENT) !== undefined, 'a notification to a stranger');
      const toBob = event(bob, 'alice@localhost', NS_NICK);
      const toAlice = event(alice, 'alice@localhost', NS_NICK);
      const id = await publish(alice, NS_NICK, nick('Alice'));
      expect(id).to.be.a('string').and.not.empty;
      for (const message of [await toBob, await toAlice]) {
        expect(message.attrs.type).to.equal('headline');
        const item = message.getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!;
        expect(item.attrs.id).to.equal(id);
        expect(item.getChild('nick', NS_NICK)!.text()).to.equal('Alice');
      }
      // Probes along the same path (a message from the server's side of the account): they arrive after what the publish would have sent.
      await silentOld.proveWith(
        () => bob.send(xml('message', { to: 'alice@localhost/old', type: 'chat' }, xml('body', {}, 'probe-old'))),
        (s) => s.is('message') && s.getChildText('body') === 'probe-old',
      );
      await silentCarol.proveWith(
        () => alice.send(xml('message', { to: 'carol@localhost/pc', type: 'chat' }, xml('body', {}, 'probe'))),
        (s) => s.is('message') && s.getChildText('body') === 'probe',
      );
    });

    it('lets the owner and a subscribed contact retrieve, refuses a stranger and an unknown node', async () => {
      expect((await items(alice, 'alice@localhost', NS_NICK)).map((i) => i.getChild('nick', NS_NICK)!.text())).to.deep.equal(['Alice']);
      expect((await items(bob, 'alice@localhost', NS_NICK)).map((i) => i.getChild('nick', NS_NICK)!.text())).to.deep.equal(['Alice']);
      // Without a `to`, the request is for the sender's own account.
      const own = await alice.iqCaller.request(xml('iq', { type: 'get' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('items', { node: NS_NICK }))));
      expect(own.getChild('pubsub')!.getChild('items')!.getChildren('item')).to.have.length(1);
      expect(await refusal(items(carol, 'alice@localhost', NS_NICK))).to.deep.include({ condition: 'not-authorized', specific: 'presence-subscription-required', type: 'auth' });
      expect(await refusal(items(bob, 'alice@localhost', 'urn:example:none'))).to.deep.include({ condition: 'item-not-found' });
    });

    it('refuses publishing to another account (forbidden) and malformed publishes', async () => {
      const toBob = bob.iqCaller.request(xml('iq', { type: 'set', to: 'alice@localhost' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('publish', { node: NS_NICK }, xml('item', {}, nick('Mallory'))))));
      expect(await refusal(toBob)).to.deep.include({ condition: 'forbidden' });
      const noNode = alice.iqCaller.request(xml('iq', { type: 'set' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('publish', {}, xml('item', {}, nick('x'))))));
      expect(await refusal(noNode)).to.deep.include({ condition: 'bad-request', specific: 'nodeid-required' });
      const noPayload = alice.iqCaller.request(xml('iq', { type: 'set' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('publish', { node: NS_NICK }, xml('item', { id: 'x' })))));
      expect(await refusal(noPayload)).to.deep.include({ condition: 'bad-request', specific: 'payload-required' });
      const twoPayloads = alice.iqCaller.request(xml('iq', { type: 'set' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('publish', { node: NS_NICK }, xml('item', {}, nick('a'), nick('b'))))));
      expect(await refusal(twoPayloads)).to.deep.include({ condition: 'bad-request', specific: 'invalid-payload' });
      expect(await refusal(publish(alice, 'urn:example:bad', nick('x'), { publishOptions: { 'pubsub#access_model': 'sometimes' } }))).to.deep.include({ condition: 'bad-request', specific: 'invalid-options' });
      expect(await refusal(publish(alice, 'urn:example:big', nick('x'), { publishOptions: { 'pubsub#max_items': '100000' } }))).to.deep.include({ condition: 'not-acceptable', specific: 'max-items-exceeded' });
      // Names and ids are key columns: a longer one is refused before it reaches the database.
      expect(await refusal(publish(alice, `urn:${'n'.repeat(200)}`, nick('x')))).to.deep.include({ condition: 'not-acceptable' });
      expect(await refusal(publish(alice, NS_NICK, nick('x'), { id: 'i'.repeat(192) }))).to.deep.include({ condition: 'not-acceptable' });
    });

    it('creates with publish-options (OMEMO open access) and checks them as preconditions afterwards', async () => {
      const toBob = event(bob, 'alice@localhost', NS_OMEMO_DEVICES);
      await publish(alice, NS_OMEMO_DEVICES, devices(1, 2), { id: 'current', publishOptions: { 'pubsub#access_model': 'open' } });
      expect((await toBob).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!.attrs.id).to.equal('current');
      // Open: a stranger reads it.
      const list = await items(carol, 'alice@localhost', NS_OMEMO_DEVICES);
      expect(list.map((i) => i.attrs.id)).to.deep.equal(['current']);
      // The same options again are met; other options are not.
      await publish(alice, NS_OMEMO_DEVICES, devices(1, 2, 3), { id: 'current', publishOptions: { 'pubsub#access_model': 'open' } });
      const unmet = await refusal(publish(alice, NS_OMEMO_DEVICES, devices(1), { id: 'current', publishOptions: { 'pubsub#access_model': 'presence' } }));
      expect(unmet).to.deep.include({ condition: 'conflict', specific: 'precondition-not-met', type: 'cancel' });
      // The nick node (default presence access) does not meet access_model open.
      expect(await refusal(publish(alice, NS_NICK, nick('A'), { publishOptions: { 'pubsub#access_model': 'open' } }))).to.deep.include({ condition: 'conflict', specific: 'precondition-not-met' });
      expect((await items(carol, 'alice@localhost', NS_OMEMO_DEVICES))[0]!.getChild('list')!.getChildren('device')).to.have.length(3);
    });

    it('keeps max_items, serves the newest first, by max_items and by ids, and replaces an item of the same id', async () => {
      const node = 'urn:example:feed';
      for (const n of [1, 2, 3, 4, 5]) await publish(alice, node, nick(`n${n}`), { id: `i${n}`, publishOptions: { 'pubsub#max_items': '3' } });
      expect((await items(alice, 'alice@localhost', node)).map((i) => i.attrs.id)).to.deep.equal(['i5', 'i4', 'i3']);
      expect((await items(bob, 'alice@localhost', node, { max: 2 })).map((i) => i.attrs.id)).to.deep.equal(['i5', 'i4']);
      expect((await items(bob, 'alice@localhost', node, { ids: ['i3', 'i1'] })).map((i) => i.attrs.id)).to.deep.equal(['i3']);
      await publish(alice, node, nick('n3 again'), { id: 'i3' });
      const after = await items(alice, 'alice@localhost', node);
      expect(after.map((i) => i.attrs.id)).to.deep.equal(['i3', 'i5', 'i4']);
      expect(after[0]!.getChild('nick', NS_NICK)!.text()).to.equal('n3 again');
    });

    it('retracts with a notification, and refuses an unknown item or a retract by someone else', async () => {
      const node = 'urn:example:feed';
      const toBob = event(bob, 'alice@localhost', node);
      await alice.iqCaller.request(xml('iq', { type: 'set' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('retract', { node, notify: 'true' }, xml('item', { id: 'i4' })))));
      expect((await toBob).getChild('event', NS_EVENT)!.getChild('items')!.getChild('retract')!.attrs.id).to.equal('i4');
      expect((await items(alice, 'alice@localhost', node)).map((i) => i.attrs.id)).to.deep.equal(['i3', 'i5']);
      const unknown = alice.iqCaller.request(xml('iq', { type: 'set' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('retract', { node }, xml('item', { id: 'nope' })))));
      expect(await refusal(unknown)).to.deep.include({ condition: 'item-not-found' });
      const foreign = bob.iqCaller.request(xml('iq', { type: 'set', to: 'alice@localhost' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('retract', { node }, xml('item', { id: 'i5' })))));
      expect(await refusal(foreign)).to.deep.include({ condition: 'forbidden' });
    });

    it('sends the last item of each wanted node when a contact comes online, once, and what new caps newly want', async () => {
      const bob2 = await login(t, { user: 'bob', password: 'bob-pw', resource: 'tablet' });
      try {
        const nickEvent = event(bob2, 'alice@localhost', NS_NICK);
        const omemoEvent = event(bob2, 'alice@localhost', NS_OMEMO_DEVICES);
        // bob's caps are known already: the server does not ask again.
        await announceCaps(bob2, NOTIFY, { expectQuery: false });
        const last = await nickEvent;
        expect(last.getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!.getChild('nick', NS_NICK)!.text()).to.equal('Alice');
        expect(last.getChild('delay', 'urn:xmpp:delay')!.attrs.stamp).to.match(/^\d{4}-/);
        await omemoEvent;
        // A later presence change does not send them again.
        const silent = expectSilence(bob2, (s) => s.getChild('event', NS_EVENT)?.getChildElements()[0]?.attrs.node === NS_NICK, 'the last item again');
        await bob2.send(xml('presence', {}, xml('show', {}, 'away')));
        await silent.proveWith(
          () => alice.send(xml('message', { to: 'bob@localhost/tablet', type: 'chat' }, xml('body', {}, 'probe-last'))),
          (s) => s.getChildText('body') === 'probe-last',
        );
        // New capabilities that ask for one more node: its last item comes, the others do not come again.
        await publish(alice, 'urn:example:later', nick('later'), { id: 'later' });
        const again = expectSilence(bob2, (s) => s.getChild('event', NS_EVENT)?.getChildElements()[0]?.attrs.node === NS_NICK, 'the nick again');
        const later = event(bob2, 'alice@localhost', 'urn:example:later');
        await announceCaps(bob2, [...NOTIFY, 'urn:example:later+notify']);
        expect((await later).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!.attrs.id).to.equal('later');
        await again.proveWith(
          () => alice.send(xml('message', { to: 'bob@localhost/tablet', type: 'chat' }, xml('body', {}, 'probe-later'))),
          (s) => s.getChildText('body') === 'probe-later',
        );
      } finally {
        await stopAll(bob2);
      }
    });

    it('does not believe caps whose hash does not match the features (no notifications)', async () => {
      const liar = await login(t, { user: 'bob', password: 'bob-pw', resource: 'liar' });
      try {
        const silent = expectSilence(liar, (s) => s.getChild('event', NS_EVENT) !== undefined, 'a notification to a client with a forged caps hash');
        await announceCaps(liar, NOTIFY, { forge: true });
        const toBob = event(bob, 'alice@localhost', NS_NICK);
        await publish(alice, NS_NICK, nick('Alice (forged test)'));
        await toBob;
        await silent.proveWith(
          () => alice.send(xml('message', { to: 'bob@localhost/liar', type: 'chat' }, xml('body', {}, 'probe-liar'))),
          (s) => s.getChildText('body') === 'probe-liar',
        );
      } finally {
        await stopAll(liar);
      }
    });

    it('serves bookmarks (XEP-0402): whitelist, max_items max, notify_retract to the own resources only', async () => {
      const options = { 'pubsub#persist_items': 'true', 'pubsub#max_items': 'max', 'pubsub#send_last_published_item': 'never', 'pubsub#access_model': 'whitelist' };
      const conference = xml('conference', { xmlns: NS_BOOKMARKS, name: 'Room', autojoin: 'true' }, xml('nick', {}, 'al'));
      const silentBob = expectSilence(bob, (s) => s.getChild('event', NS_EVENT)?.getChildElements()[0]?.attrs.node === NS_BOOKMARKS, 'a bookmark notification to a contact');
      const own = event(alice, 'alice@localhost', NS_BOOKMARKS);
      await publish(alice, NS_BOOKMARKS, conference, { id: 'room@conference.localhost', publishOptions: options });
      expect((await own).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!.attrs.id).to.equal('room@conference.localhost');
      await publish(alice, NS_BOOKMARKS, conference, { id: 'other@conference.localhost', publishOptions: options });
      expect((await items(alice, 'alice@localhost', NS_BOOKMARKS)).map((i) => i.attrs.id)).to.have.members(['room@conference.localhost', 'other@conference.localhost']);
      expect(await refusal(items(bob, 'alice@localhost', NS_BOOKMARKS))).to.deep.include({ condition: 'not-allowed', specific: 'closed-node' });
      const retracted = event(alice, 'alice@localhost', NS_BOOKMARKS);
      await alice.iqCaller.request(xml('iq', { type: 'set' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('retract', { node: NS_BOOKMARKS, notify: '1' }, xml('item', { id: 'other@conference.localhost' })))));
      expect((await retracted).getChild('event', NS_EVENT)!.getChild('items')!.getChild('retract')!.attrs.id).to.equal('other@conference.localhost');
      await silentBob.proveWith(
        () => alice.send(xml('message', { to: 'bob@localhost/phone', type: 'chat' }, xml('body', {}, 'probe-bookmarks'))),
        (s) => s.getChildText('body') === 'probe-bookmarks',
      );
    });

    it('stores XEP-0048 bookmarks in storage:bookmarks as XEP-0223 private PEP data (the XEP-0411 compatibility node)', async () => {
      const options = { 'pubsub#persist_items': 'true', 'pubsub#access_model': 'whitelist' };
      const storage = xml('storage', { xmlns: 'storage:bookmarks' }, xml('conference', { jid: 'room@conference.localhost', autojoin: 'true', name: 'Room' }, xml('nick', {}, 'al')));
      await publish(alice, 'storage:bookmarks', storage, { id: 'current', publishOptions: options });
      await publish(alice, 'storage:bookmarks', storage, { id: 'current', publishOptions: options });
      const [stored] = await items(alice, 'alice@localhost', 'storage:bookmarks');
      expect(stored!.attrs.id).to.equal('current');
      expect(stored!.getChild('storage', 'storage:bookmarks')!.getChild('conference')!.attrs.jid).to.equal('room@conference.localhost');
      expect(await refusal(items(bob, 'alice@localhost', 'storage:bookmarks'))).to.deep.include({ condition: 'not-allowed', specific: 'closed-node' });
    });

    it('configures (node_config form), purges and deletes a node with notifications, owner only', async () => {
      const node = 'urn:example:feed';
      const form = await alice.iqCaller.request(xml('iq', { type: 'get' }, xml('pubsub', { xmlns: NS_OWNER }, xml('configure', { node }))));
      const fields = form.getChild('pubsub', NS_OWNER)!.getChild('configure')!.getChild('x')!.getChildren('field');
      expect(fields.find((f) => f.attrs.var === 'pubsub#max_items')!.getChildText('value')).to.equal('3');
      expect(fields.find((f) => f.attrs.var === 'pubsub#access_model')!.getChildText('value')).to.equal('presence');
      const submit = (values: Record<string, string>) =>
        alice.iqCaller.request(
          xml('iq', { type: 'set' }, xml('pubsub', { xmlns: NS_OWNER }, xml('configure', { node }, xml('x', { xmlns: 'jabber:x:data', type: 'submit' }, xml('field', { var: 'FORM_TYPE', type: 'hidden' }, xml('value', {}, 'http://jabber.org/protocol/pubsub#node_config')), ...Object.entries(values).map(([k, v]) => xml('field', { var: k }, xml('value', {}, v))))))),
        );
      await submit({ 'pubsub#max_items': '1', 'pubsub#deliver_payloads': 'false' });
      expect((await items(alice, 'alice@localhost', node)).map((i) => i.attrs.id)).to.deep.equal(['i3']);
      expect(await refusal(submit({ 'pubsub#unknown': '1' }))).to.deep.include({ condition: 'bad-request', specific: 'invalid-options' });
      const foreign = bob.iqCaller.request(xml('iq', { type: 'get', to: 'alice@localhost' }, xml('pubsub', { xmlns: NS_OWNER }, xml('configure', { node }))));
      expect(await refusal(foreign)).to.deep.include({ condition: 'forbidden' });
      // Without payloads: the notification names the item only.
      const bare = event(bob, 'alice@localhost', node);
      await publish(alice, node, nick('quiet'), { id: 'q' });
      const item = (await bare).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!;
      expect(item.attrs.id).to.equal('q');
      expect(item.getChildElements()).to.have.length(0);
      const purged = event(bob, 'alice@localhost', node);
      await alice.iqCaller.request(xml('iq', { type: 'set' }, xml('pubsub', { xmlns: NS_OWNER }, xml('purge', { node }))));
      expect((await purged).getChild('event', NS_EVENT)!.getChild('purge')).to.exist;
      expect(await items(alice, 'alice@localhost', node)).to.deep.equal([]);
      const deleted = event(bob, 'alice@localhost', node);
      await alice.iqCaller.request(xml('iq', { type: 'set' }, xml('pubsub', { xmlns: NS_OWNER }, xml('delete', { node }))));
      expect((await deleted).getChild('event', NS_EVENT)!.getChild('delete')).to.exist;
      expect(await refusal(items(alice, 'alice@localhost', node))).to.deep.include({ condition: 'item-not-found' });
    });

    it('answers the other requests a client can get wrong with their conditions', async () => {
      const set = (client: Client, to: string, ...children: Element[]) => client.iqCaller.request(xml('iq', { type: 'set', to }, xml('pubsub', { xmlns: NS_PUBSUB }, ...children)));
      // Explicit subscriptions are not offered on PEP (they are implicit: presence and caps).
      const subscribe = await refusal(set(bob, 'alice@localhost', xml('subscribe', { node: NS_NICK, jid: 'bob@localhost' })));
      expect(subscribe).to.deep.include({ condition: 'feature-not-implemented', specific: 'unsupported' });
      const badMax = bob.iqCaller.request(xml('iq', { type: 'get', to: 'alice@localhost' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('items', { node: NS_NICK, max_items: 'all' }))));
      expect(await refusal(badMax)).to.deep.include({ condition: 'bad-request' });
      await set(alice, 'alice@localhost', xml('create', { node: 'urn:example:created' }));
      expect(await refusal(set(alice, 'alice@localhost', xml('create', { node: 'urn:example:created' })))).to.deep.include({ condition: 'conflict' });
      expect(await refusal(set(bob, 'alice@localhost', xml('create', { node: 'urn:example:theirs' })))).to.deep.include({ condition: 'forbidden' });
      const wrongForm = set(
        alice,
        'alice@localhost',
        xml('publish', { node: 'urn:example:form' }, xml('item', {}, nick('x'))),
        xml('publish-options', {}, xml('x', { xmlns: 'jabber:x:data', type: 'submit' }, xml('field', { var: 'FORM_TYPE', type: 'hidden' }, xml('value', {}, 'urn:example:other')))),
      );
      expect(await refusal(wrongForm)).to.deep.include({ condition: 'bad-request', specific: 'invalid-options' });
      const noItem = set(alice, 'alice@localhost', xml('retract', { node: NS_NICK }));
      expect(await refusal(noItem)).to.deep.include({ condition: 'bad-request', specific: 'item-required' });
    });

    it('applies the roster access model with its groups', async () => {
      const dave = await login(t, { user: 'dave', password: 'dave-pw', resource: 'x' });
      try {
        await publish(alice, 'urn:example:friends', nick('for friends'), { publishOptions: { 'pubsub#access_model': 'roster' } });
        // Not in an allowed group yet.
        expect(await refusal(items(dave, 'alice@localhost', 'urn:example:friends'))).to.deep.include({ condition: 'not-authorized', specific: 'not-in-roster-group' });
        const submit = xml('iq', { type: 'set' }, xml('pubsub', { xmlns: NS_OWNER }, xml('configure', { node: 'urn:example:friends' }, xml('x', { xmlns: 'jabber:x:data', type: 'submit' }, xml('field', { var: 'pubsub#roster_groups_allowed' }, xml('value', {}, 'friends'))))));
        await alice.iqCaller.request(submit);
        expect(await items(dave, 'alice@localhost', 'urn:example:friends')).to.have.length(1);
        expect(await refusal(items(bob, 'alice@localhost', 'urn:example:friends'))).to.deep.include({ condition: 'not-authorized', specific: 'not-in-roster-group' });
      } finally {
        await stopAll(dave);
      }
    });

    it('sends the last items to a contact as soon as the account grants it a presence subscription', async () => {
      // carol has been a stranger so far; alice approves her subscription request.
      const nickEvent = event(carol, 'alice@localhost', NS_NICK);
      await subscribe(carol, 'carol@localhost', alice, 'alice@localhost');
      const item = (await nickEvent).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!;
      expect(item.getChildText('nick', NS_NICK)).to.equal('Alice (forged test)');
      expect((await items(carol, 'alice@localhost', NS_NICK)).map((i) => i.getChildText('nick', NS_NICK))).to.deep.equal(['Alice (forged test)']);
    });

    it('removes the nodes and items of an account removed', async () => {
      const gone = await login(t, { user: 'gone', password: 'gone-pw', resource: 'r' });
      await publish(gone, NS_NICK, nick('Gone'));
      await stopAll(gone);
      const db = t.server.services.storage.db();
      expect(await db('pubsub_nodes').where({ service: 'gone@localhost' })).to.have.length(1);
      await ok(t, 'unregister', { user: 'gone', host: 'localhost' });
      expect(await db('pubsub_nodes').where({ service: 'gone@localhost' })).to.have.length(0);
      expect(await db('pubsub_items').where({ publisher: 'gone@localhost/r' })).to.have.length(0);
    });
  });
}
