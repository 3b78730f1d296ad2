/**
 * The pubsub service on pubsub.localhost (mod_pubsub, XEP-0060) with real clients, on each database: service
 * discovery of the service, its nodes and their items; creation (named and instant) and its conflict;
 * subscriptions with notifications and the last item on subscribing; publish and retract by affiliation
 * (owner, publisher, member, outcast) and the publish model; the open, presence and whitelist access models
 * with their conditions; the owner use cases (configure, subscriptions, affiliations, purge, delete) and their
 * refusals; an account's removal taking its nodes, affiliations and subscriptions; the `host` and
 * `access_createnode` options.
 */
import { expect } from 'chai';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import { NS_EVENT, NS_OWNER, NS_PUBSUB, befriend, ok, publishOptions, refusal } from './helpers.js';

const SERVICE = 'pubsub.localhost';
const entry = (text: string) => xml('entry', { xmlns: 'urn:example:news' }, text);

const request = (client: Client, type: 'get' | 'set', ...children: Array<Element | undefined>) => client.iqCaller.request(xml('iq', { type, to: SERVICE }, ...children), 10_000);
const pubsub = (client: Client, type: 'get' | 'set', ...children: Array<Element | undefined>) => request(client, type, xml('pubsub', { xmlns: NS_PUBSUB }, ...children));
const owner = (client: Client, type: 'get' | 'set', ...children: Element[]) => request(client, type, xml('pubsub', { xmlns: NS_OWNER }, ...children));
const create = (client: Client, node: string, config: Record<string, string> = {}) =>
  pubsub(client, 'set', xml('create', { node }), Object.keys(config).length ? xml('configure', {}, configForm(config)) : undefined);
const publishTo = async (client: Client, node: string, payload: Element, id?: string) =>
  (await pubsub(client, 'set', xml('publish', { node }, xml('item', id ? { id } : {}, payload)))).getChild('pubsub')!.getChild('publish')!.getChild('item')!.attrs.id!;
const itemsOf = async (client: Client, node: string, max?: number) =>
  (await pubsub(client, 'get', xml('items', max === undefined ? { node } : { node, max_items: String(max) }))).getChild('pubsub')!.getChild('items')!.getChildren('item');
const subscribe = (client: Client, node: string, jid: string) => pubsub(client, 'set', xml('subscribe', { node, jid }));
const notification = (client: Client, node: string) => next(client, (s) => s.is('message') && s.attrs.from === SERVICE && s.getChild('event', NS_EVENT)?.getChildElements()[0]?.attrs.node === node, 10_000);
const setAffiliation = (client: Client, node: string, jid: string, affiliation: string) => owner(client, 'set', xml('affiliations', { node }, xml('affiliation', { jid, affiliation })));

function configForm(values: Record<string, string>): Element {
  return xml(
    'x',
    { xmlns: 'jabber:x:data', type: 'submit' },
    xml('field', { var: 'FORM_TYPE', type: 'hidden' }, xml('value', {}, 'http://jabber.org/protocol/pubsub#node_config')),
    ...Object.entries(values).map(([k, v]) => xml('field', { var: k }, xml('value', {}, v))),
  );
}

for (const database of testDatabases()) {
  describe(`The pubsub service on ${database.name} (mod_pubsub, XEP-0060)`, function () {
    this.timeout(120_000);
    let t: TestServer;
    let alice: Client;
    let bob: Client;
    let carol: Client;

    before(async () => {
      const settings = await database.settings('/tmp');
      t = await TestServer.start({ ...xmppConfig({ mod_pubsub: {}, mod_roster: {}, mod_presence: {}, mod_disco: {}, mod_admin_extra: {} }), ...serverSqlConfig(settings) });
      await t.bootstrapAdmin();
      for (const user of ['alice', 'bob', 'carol', 'gone']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
      await befriend(t, 'alice', 'bob');
      alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'a' });
      bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b' });
      carol = await login(t, { user: 'carol', password: 'carol-pw', resource: 'c' });
      for (const c of [alice, bob, carol]) await c.send(xml('presence'));
    });
    after(async () => {
      await stopAll(alice, bob, carol);
      await t?.stop();
      await database.cleanup();
    });

    it('is listed by the server and announces itself (disco)', async () => {
      const items = await alice.iqCaller.request(xml('iq', { type: 'get', to: 'localhost' }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#items' })));
      expect(items.getChild('query')!.getChildren('item').map((i) => i.attrs.jid)).to.include(SERVICE);
      const info = await request(alice, 'get', xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' }));
      const query = info.getChild('query')!;
      expect(query.getChild('identity')!.attrs).to.deep.include({ category: 'pubsub', type: 'service' });
      expect(query.getChildren('feature').map((f) => f.attrs.var)).to.include.members([NS_PUBSUB, `${NS_PUBSUB}#subscribe`, `${NS_PUBSUB}#publish-options`]);
    });

    it('creates nodes (named, instant), refuses a second creation, lists them and their items in disco', async () => {
      await create(alice, 'news', { 'pubsub#title': 'News' });
      expect(await refusal(create(bob, 'news'))).to.deep.include({ condition: 'conflict' });
      const instant = await pubsub(alice, 'set', xml('create'));
      const name = instant.getChild('pubsub')!.getChild('create')!.attrs.node!;
      expect(name).to.be.a('string').and.not.empty;
      const nodes = await request(bob, 'get', xml('query', { xmlns: 'http://jabber.org/protocol/disco#items' }));
      expect(nodes.getChild('query')!.getChildren('item').map((i) => i.attrs.node)).to.include.members(['news', name]);
      expect(nodes.getChild('query')!.getChildren('item').find((i) => i.attrs.node === 'news')!.attrs.name).to.equal('News');
      await publishTo(alice, 'news', entry('first'), 'first');
      const items = await request(bob, 'get', xml('query', { xmlns: 'http://jabber.org/protocol/disco#items', node: 'news' }));
      expect(items.getChild('query')!.getChildren('item').map((i) => i.attrs.name)).to.deep.equal(['first']);
      const info = await request(bob, 'get', xml('query', { xmlns: 'http://jabber.org/protocol/disco#info', node: 'news' }));
      expect(info.getChild('query')!.getChild('identity')!.attrs).to.deep.include({ category: 'pubsub', type: 'leaf' });
      expect(await refusal(request(bob, 'get', xml('query', { xmlns: 'http://jabber.org/protocol/disco#info', node: 'none' })))).to.deep.include({ condition: 'item-not-found' });
    });

    it('subscribes (with the last item), notifies subscribers with payloads, and unsubscribes', async () => {
      const last = notification(bob, 'news');
      const answer = await subscribe(bob, 'news', 'bob@localhost');
      expect(answer.getChild('pubsub')!.getChild('subscription')!.attrs).to.deep.include({ node: 'news', jid: 'bob@localhost', subscription: 'subscribed' });
      expect((await last).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!.attrs.id).to.equal('first');
      const published = notification(bob, 'news');
      const id = await publishTo(alice, 'news', entry('second'));
      const item = (await published).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!;
      expect(item.attrs.id).to.equal(id);
      expect(item.getChildText('entry', 'urn:example:news')).to.equal('second');
      expect((await itemsOf(carol, 'news', 1)).map((i) => i.attrs.id)).to.deep.equal([id]);
      const mine = await pubsub(bob, 'get', xml('subscriptions'));
      expect(mine.getChild('pubsub')!.getChild('subscriptions')!.getChildren('subscription').map((s) => s.attrs.node)).to.deep.equal(['news']);
      expect(await refusal(subscribe(carol, 'news', 'bob@localhost'))).to.deep.include({ condition: 'bad-request', specific: 'invalid-jid' });
      await subscribe(carol, 'news', 'carol@localhost/c');
      await pubsub(carol, 'set', xml('unsubscribe', { node: 'news', jid: 'carol@localhost/c' }));
      expect(await refusal(pubsub(carol, 'set', xml('unsubscribe', { node: 'news', jid: 'carol@localhost/c' })))).to.deep.include({ condition: 'unexpected-request', specific: 'not-subscribed' });
      expect(await refusal(subscribe(carol, 'nowhere', 'carol@localhost'))).to.deep.include({ condition: 'item-not-found' });
    });

    it('lets publishers publish and retract their own items, and refuses the others', async () => {
      expect(await refusal(publishTo(bob, 'news', entry('not yet')))).to.deep.include({ condition: 'forbidden' });
      await setAffiliation(alice, 'news', 'bob@localhost', 'publisher');
      const mine = await publishTo(bob, 'news', entry('by bob'), 'bobs');
      expect(await refusal(pubsub(bob, 'set', xml('retract', { node: 'news' }, xml('item', { id: 'first' }))))).to.deep.include({ condition: 'forbidden' });
      const retracted = notification(bob, 'news');
      await pubsub(bob, 'set', xml('retract', { node: 'news', notify: 'true' }, xml('item', { id: mine })));
      expect((await retracted).getChild('event', NS_EVENT)!.getChild('items')!.getChild('retract')!.attrs.id).to.equal(mine);
      const affiliations = await pubsub(bob, 'get', xml('affiliations'));
      expect(affiliations.getChild('pubsub')!.getChild('affiliations')!.getChildren('affiliation').map((a) => a.attrs)).to.deep.include({ node: 'news', affiliation: 'publisher' });
      // publish-options preconditions hold on the service too.
      const unmet = pubsub(alice, 'set', xml('publish', { node: 'news' }, xml('item', {}, entry('x'))), publishOptions({ 'pubsub#access_model': 'whitelist' }));
      expect(await refusal(unmet)).to.deep.include({ condition: 'conflict', specific: 'precondition-not-met' });
    });

    it('applies the whitelist and presence access models, and bans outcasts', async () => {
      await create(alice, 'private', { 'pubsub#access_model': 'whitelist' });
      expect(await refusal(subscribe(carol, 'private', 'carol@localhost'))).to.deep.include({ condition: 'not-allowed', specific: 'closed-node' });
      expect(await refusal(itemsOf(carol, 'private'))).to.deep.include({ condition: 'not-allowed', specific: 'closed-node' });
      await setAffiliation(alice, 'private', 'carol@localhost', 'member');
      await subscribe(carol, 'private', 'carol@localhost');
      await create(alice, 'friends', { 'pubsub#access_model': 'presence' });
      expect(await refusal(itemsOf(carol, 'friends'))).to.deep.include({ condition: 'not-authorized', specific: 'presence-subscription-required' });
      expect(await itemsOf(bob, 'friends')).to.deep.equal([]);
      await setAffiliation(alice, 'private', 'carol@localhost', 'outcast');
      expect(await refusal(itemsOf(carol, 'private'))).to.deep.include({ condition: 'forbidden' });
      const subscriptions = await owner(alice, 'get', xml('subscriptions', { node: 'private' }));
      expect(subscriptions.getChild('pubsub')!.getChild('subscriptions')!.getChildren('subscription')).to.deep.equal([]);
    });

    it('keeps the owner use cases to owners: configure, subscriptions, affiliations, purge, delete', async () => {
      expect(await refusal(owner(bob, 'get', xml('configure', { node: 'news' })))).to.deep.include({ condition: 'forbidden' });
      expect(await refusal(owner(bob, 'set', xml('delete', { node: 'news' })))).to.deep.include({ condition: 'forbidden' });
      const form = await owner(alice, 'get', xml('configure', { node: 'news' }));
      expect(form.getChild('pubsub')!.getChild('configure')!.getChild('x')!.getChildren('field').find((f) => f.attrs.var === 'pubsub#title')!.getChildText('value')).to.equal('News');
      await owner(alice, 'set', xml('configure', { node: 'news' }, configForm({ 'pubsub#max_items': '1' })));
      expect((await itemsOf(alice, 'news')).length).to.equal(1);
      const affiliations = await owner(alice, 'get', xml('affiliations', { node: 'news' }));
      expect(affiliations.getChild('pubsub')!.getChild('affiliations')!.getChildren('affiliation').map((a) => `${a.attrs.jid}:${a.attrs.affiliation}`)).to.deep.equal(['alice@localhost:owner', 'bob@localhost:publisher']);
      expect(await refusal(setAffiliation(alice, 'news', 'alice@localhost', 'none'))).to.deep.include({ condition: 'not-acceptable' });
      await owner(alice, 'set', xml('subscriptions', { node: 'news' }, xml('subscription', { jid: 'carol@localhost', subscription: 'subscribed' })));
      const purged = notification(carol, 'news');
      await owner(alice, 'set', xml('purge', { node: 'news' }));
      expect((await purged).getChild('event', NS_EVENT)!.getChild('purge')).to.exist;
      const deleted = notification(bob, 'news');
      await owner(alice, 'set', xml('delete', { node: 'news' }));
      expect((await deleted).getChild('event', NS_EVENT)!.getChild('delete')).to.exist;
      expect(await refusal(itemsOf(bob, 'news'))).to.deep.include({ condition: 'item-not-found' });
    });

    it('removes the nodes an account alone owned, and its subscriptions and affiliations, with the account', async () => {
      const gone = await login(t, { user: 'gone', password: 'gone-pw', resource: 'r' });
      try {
        await create(gone, 'goners');
        await subscribe(gone, 'friends', 'gone@localhost').catch(() => undefined);
        await subscribe(gone, 'private', 'gone@localhost').catch(() => undefined);
        await create(alice, 'shared');
        await setAffiliation(alice, 'shared', 'gone@localhost', 'owner');
        await subscribe(gone, 'shared', 'gone@localhost');
      } finally {
        await stopAll(gone);
      }
      await ok(t, 'unregister', { user: 'gone', host: 'localhost' });
      const db = t.server.services.storage.db();
      expect(await db('pubsub_nodes').where({ service: SERVICE, node: 'goners' })).to.have.length(0);
      expect(await db('pubsub_nodes').where({ service: SERVICE, node: 'shared' })).to.have.length(1);
      expect(await db('pubsub_affiliations').where({ jid: 'gone@localhost' })).to.have.length(0);
      expect(await db('pubsub_subscriptions').where({ bare: 'gone@localhost' })).to.have.length(0);
    });
  });
}

describe('The pubsub service with host and access_createnode (mod_pubsub)', function () {
  this.timeout(60_000);
  let t: TestServer;
  let alice: Client;
  let bob: Client;

  before(async () => {
    t = await TestServer.start({
      ...xmppConfig({ mod_pubsub: { host: 'events.@HOST@', access_createnode: 'creators' }, mod_roster: {} }),
      acl: { admin: { user: 'admin@localhost' }, loopback: { ip: ['127.0.0.0/8'] }, creators: { user: 'alice@localhost' } },
      access_rules: { creators: { allow: 'creators' } },
    });
    for (const user of ['alice', 'bob']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'a' });
    bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b' });
  });
  after(async () => {
    await stopAll(alice, bob);
    await t?.stop();
  });

  it('serves the configured domain and lets only whom access_createnode allows create nodes, explicitly or by publishing', async () => {
    const at = (client: Client, ...children: Element[]) => client.iqCaller.request(xml('iq', { type: 'set', to: 'events.localhost' }, xml('pubsub', { xmlns: NS_PUBSUB }, ...children)), 10_000);
    await at(alice, xml('create', { node: 'mine' }));
    expect(await refusal(at(bob, xml('create', { node: 'his' })))).to.deep.include({ condition: 'forbidden' });
    expect(await refusal(at(bob, xml('publish', { node: 'his' }, xml('item', {}, entry('x')))))).to.deep.include({ condition: 'item-not-found' });
    await at(alice, xml('publish', { node: 'auto' }, xml('item', { id: 'a1' }, entry('auto-created'))));
    const owners = await alice.iqCaller.request(xml('iq', { type: 'get', to: 'events.localhost' }, xml('pubsub', { xmlns: NS_OWNER }, xml('affiliations', { node: 'auto' }))));
    expect(owners.getChild('pubsub')!.getChild('affiliations')!.getChildren('affiliation').map((a) => a.attrs)).to.deep.equal([{ jid: 'alice@localhost', affiliation: 'owner' }]);
    expect(await refusal(pubsub(alice, 'get', xml('items', { node: 'mine' })))).to.deep.include({ condition: 'remote-server-not-found' });
  });
});
