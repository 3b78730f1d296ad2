/**
 * mod_antispam's real-time block list (RTBL) on the real server: the server's own mod_pubsub plays
 * xmppbl.org. An admin account owns the node `spam_source_domains` on pubsub.localhost and publishes items
 * whose ids are domains; mod_antispam, enabled with `rtbl_services` by a live reload_config, fetches the items
 * already there and subscribes from `localhost/rtbl`; an item published afterwards blocks its domain at once,
 * a retraction unblocks it. An event forged by someone other than the service changes nothing.
 */
import { expect } from 'chai';
import { api, ok } from '../support/admin-api.js';
import { TestServer, type RawConfig } from '../support/server.js';
import { expectSilence, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import { body, chat, delivered, refused } from './helpers.js';

const NS_PUBSUB = 'http://jabber.org/protocol/pubsub';
const NS_EVENT = 'http://jabber.org/protocol/pubsub#event';
const NODE = 'spam_source_domains';
/** What xmppbl.org's items carry: the item id is the domain; the payload says why (XEP-0377's report). */
const reason = () => xml('report', { xmlns: 'urn:xmpp:reporting:1', reason: 'urn:xmpp:reporting:spam' });

const pubsub = (client: Client, type: 'get' | 'set', child: Element) => client.iqCaller.request(xml('iq', { type, to: 'pubsub.localhost' }, xml('pubsub', { xmlns: NS_PUBSUB }, child)));

describe('mod_antispam: real-time block lists', function () {
  this.timeout(60_000);
  let t: TestServer;
  let config: RawConfig;
  let admin: Client;
  let alice: Client;
  let s1: Client;
  let s2: Client;


  before(async () => {
    config = xmppConfig({ mod_roster: {}, mod_presence: {}, mod_pubsub: {}, mod_antispam: {} });
    config.hosts = ['localhost', 'spam.example.com'];
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    for (const [user, host] of [['alice', 'localhost'], ['s1', 'spam.example.com'], ['s2', 'spam.example.com']] as const) await t.register(user, host, `${user}-pw`);
    admin = await login(t, { user: 'admin', password: 'adminpass' });
    alice = await login(t, { user: 'alice', password: 'alice-pw' });
    s1 = await login(t, { user: 's1', password: 's1-pw', host: 'spam.example.com' });
    s2 = await login(t, { user: 's2', password: 's2-pw', host: 'spam.example.com' });
    for (const client of [admin, alice, s1, s2]) await client.send(xml('presence'));
    // The block list exists before mod_antispam follows it, with one domain on it already.
    await pubsub(admin, 'set', xml('create', { node: NODE }));
    await pubsub(admin, 'set', xml('publish', { node: NODE }, xml('item', { id: 'already-bad.example' }, reason())));
  });
  after(async () => {
    await stopAll(admin, alice, s1, s2);
    await t?.stop();
  });

  it('follows the list once rtbl_services is set: the items already published are blocked', async () => {
    expect(await ok(t, 'get_blocked_domains', { host: 'localhost' })).to.deep.equal([]);
    await ok(t, 'add_to_spam_filter_cache', { host: 'localhost', jid: 'kept@elsewhere.example' });
    (config.modules as Record<string, unknown>).mod_antispam = { rtbl_services: [{ host: 'pubsub.localhost', node: NODE }] };
    await t.writeConfig(config);
    expect((await api(t, 'reload_config', {})).status).to.equal(200);
    let blocked: string[] = [];
    for (let i = 0; i < 50 && !blocked.includes('already-bad.example'); i++) {
      blocked = await ok(t, 'get_blocked_domains', { host: 'localhost' });
      if (!blocked.includes('already-bad.example')) await new Promise((r) => setTimeout(r, 100));
    }
    expect(blocked).to.deep.equal(['already-bad.example']);
    // The new options were applied in place: the cache is kept.
    expect((await ok(t, 'get_spam_filter_cache', { host: 'localhost' })).map((e: any) => e.jid)).to.deep.equal(['kept@elsewhere.example']);
    // Each virtual host subscribed from its own JID.
    const subscriptions = await admin.iqCaller.request(xml('iq', { type: 'get', to: 'pubsub.localhost' }, xml('pubsub', { xmlns: 'http://jabber.org/protocol/pubsub#owner' }, xml('subscriptions', { node: NODE }))));
    const jids = subscriptions.getChild('pubsub')!.getChild('subscriptions')!.getChildren('subscription').map((s) => s.attrs.jid);
    expect(jids.sort()).to.deep.equal(['localhost/rtbl', 'spam.example.com/rtbl']);
    // spam.example.com is not listed yet: its accounts write freely.
    await delivered(alice, s1, 'not listed yet');
  });

  it('blocks a domain as soon as the list publishes it, and unblocks it when the item is retracted', async () => {
    await pubsub(admin, 'set', xml('publish', { node: NODE }, xml('item', { id: 'spam.example.com' }, reason())));
    const silence = expectSilence(alice, (s) => s.is('message') && body(s) === 'listed now', 'the message from a listed domain');
    await refused(s1, 'listed now');
    expect(await ok(t, 'get_blocked_domains', { host: 'localhost' })).to.deep.equal(['already-bad.example', 'spam.example.com']);
    await pubsub(admin, 'set', xml('retract', { node: NODE, notify: 'true' }, xml('item', { id: 'spam.example.com' }, reason())));
    expect(await ok(t, 'get_blocked_domains', { host: 'localhost' })).to.deep.equal(['already-bad.example']);
    // s1 stays in the spam filter cache; s2, of the same domain, was never caught and gets through now.
    await refused(s1, 'cached still');
    await silence.proveWith(() => s2.send(chat('alice@localhost', 'unlisted again')), (s) => s.is('message') && body(s) === 'unlisted again');
  });

  it('ignores an event that does not come from the list\'s service', async () => {
    const forged = xml('message', { to: 'localhost/rtbl' }, xml('event', { xmlns: NS_EVENT }, xml('items', { node: NODE }, xml('item', { id: 'victim.example' }), xml('retract', { id: 'already-bad.example' }))));
    await alice.send(forged);
    await alice.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: 'jabber:iq:roster' })));
    expect(await ok(t, 'get_blocked_domains', { host: 'localhost' })).to.deep.equal(['already-bad.example']);
  });

  it('stops following when rtbl_services is set back to false: unsubscribed, its domains unblocked', async () => {
    (config.modules as Record<string, unknown>).mod_antispam = { rtbl_services: false };
    await t.writeConfig(config);
    expect((await api(t, 'reload_config', {})).status).to.equal(200);
    expect(await ok(t, 'get_blocked_domains', { host: 'localhost' })).to.deep.equal([]);
    const subscriptions = await admin.iqCaller.request(xml('iq', { type: 'get', to: 'pubsub.localhost' }, xml('pubsub', { xmlns: 'http://jabber.org/protocol/pubsub#owner' }, xml('subscriptions', { node: NODE }))));
    expect(subscriptions.getChild('pubsub')!.getChild('subscriptions')!.getChildren('subscription')).to.have.length(0);
  });
});
