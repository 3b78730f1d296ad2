/**
 * Rosters with real clients: roster get/set/remove and pushes to every interested resource, roster
 * versioning (XEP-0237), the errors of bad roster sets, the presence subscription handshake through all
 * four subscription states (checked through each side's roster), requests to offline accounts,
 * pre-approval, account removal; and the storage part on SQLite, MariaDB and PostgreSQL.
 */
import { expect } from 'chai';
import { client } from '@xmpp/client';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { expectSilence, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

const NS_ROSTER = 'jabber:iq:roster';
const ADMIN = 'admin@localhost:adminpass';
const MODULES = { mod_roster: { max_roster_size: 5 }, mod_presence: {} };

interface ItemView {
  jid: string;
  subscription: string;
  name?: string;
  ask?: string;
  approved?: string;
  groups?: string[];
}

/** An item as a plain object, with only the attributes it has. */
function view(item: Element): ItemView {
  const out: ItemView = { jid: item.attrs.jid!, subscription: item.attrs.subscription! };
  if (item.attrs.name !== undefined) out.name = item.attrs.name;
  if (item.attrs.ask !== undefined) out.ask = item.attrs.ask;
  if (item.attrs.approved !== undefined) out.approved = item.attrs.approved;
  const groups = item.getChildren('group').map((g) => g.text());
  if (groups.length) out.groups = groups;
  return out;
}

async function rosterGet(c: Client, ver?: string): Promise<Element> {
  return c.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: NS_ROSTER, ver })));
}

async function rosterItems(c: Client): Promise<ItemView[]> {
  return (await rosterGet(c)).getChild('query', NS_ROSTER)!.getChildren('item').map(view);
}

async function rosterSet(c: Client, item: Element): Promise<Element> {
  return c.iqCaller.request(xml('iq', { type: 'set' }, xml('query', { xmlns: NS_ROSTER }, item)));
}

function isPush(stanza: Element, jid?: string): boolean {
  const item = stanza.is('iq') && stanza.attrs.type === 'set' ? stanza.getChild('query', NS_ROSTER)?.getChild('item') : undefined;
  return item !== undefined && (jid === undefined || item.attrs.jid === jid);
}

function nextPush(c: Client, jid?: string): Promise<Element> {
  return next(c, (s) => isPush(s, jid));
}

function pushedItem(push: Element): ItemView {
  return view(push.getChild('query', NS_ROSTER)!.getChild('item')!);
}

function isPresenceFrom(stanza: Element, type: string | undefined, from: string): boolean {
  return stanza.is('presence') && stanza.attrs.type === type && stanza.attrs.from === from;
}

function nextPresence(c: Client, type: string | undefined, from: string): Promise<Element> {
  return next(c, (s) => isPresenceFrom(s, type, from));
}

async function expectIqError(request: Promise<unknown>, condition: string): Promise<void> {
  try {
    await request;
  } catch (err) {
    expect((err as { condition?: string }).condition).to.equal(condition);
    return;
  }
  expect.fail(`expected <${condition}/>`);
}

/** Logged in, roster requested (so it gets pushes) and, unless told otherwise, available. */
async function online(t: TestServer, user: string, resource: string, available = true): Promise<Client> {
  const c = await login(t, { user, password: `${user}-pw`, resource });
  await rosterGet(c, '');
  if (available) await c.send(xml('presence'));
  return c;
}

describe('XMPP roster', () => {
  let t: TestServer;
  const clients: Client[] = [];
  const connect = async (user: string, resource: string, available = true) => {
    const c = await online(t, user, resource, available);
    clients.push(c);
    return c;
  };

  before(async () => {
    t = await TestServer.start(xmppConfig(MODULES));
    await t.bootstrapAdmin();
    for (const user of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'gina', 'hank', 'ivan', 'judy']) {
      await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    }
  });
  afterEach(async () => {
    await stopAll(...clients.splice(0));
  });
  after(() => t.stop());

  it('offers roster versioning and pre-approval as stream features', async () => {
    const features: Element[] = [];
    const c = client({ service: `xmpp://127.0.0.1:${t.server.portOf('service_c2s')}`, domain: 'localhost', username: 'alice', password: 'alice-pw' });
    c.on('error', () => {});
    c.on('element', (el: Element) => {
      if (el.is('features', 'http://etherx.jabber.org/streams')) features.push(el);
    });
    c.reconnect.stop();
    await c.start();
    clients.push(c);
    const last = features.at(-1)!;
    expect(last.getChild('bind', 'urn:ietf:params:xml:ns:xmpp-bind')).to.exist;
    expect(last.getChild('ver', 'urn:xmpp:features:rosterver')).to.exist;
    expect(last.getChild('sub', 'urn:xmpp:features:pre-approval')).to.exist;
  });

  it('adds, updates and removes items, pushing each change to every interested resource', async () => {
    const one = await connect('alice', 'one', false);
    const two = await connect('alice', 'two', false);
    // Connected but never asked for the roster: not interested, no pushes.
    const three = await login(t, { user: 'alice', password: 'alice-pw', resource: 'three' });
    clients.push(three);
    const atThree = expectSilence(three, (s) => isPush(s), 'a roster push to a resource that never asked for the roster');

    const pushes = Promise.all([nextPush(one, 'bob@localhost'), nextPush(two, 'bob@localhost')]);
    const result = await rosterSet(one, xml('item', { jid: 'Bob@LocalHost', name: 'Bob' }, xml('group', {}, 'Friends'), xml('group', {}, 'Work')));
    expect(result.attrs.type).to.equal('result');
    for (const push of await pushes) {
      expect(pushedItem(push)).to.deep.equal({ jid: 'bob@localhost', subscription: 'none', name: 'Bob', groups: ['Friends', 'Work'] });
      expect(push.attrs.to).to.be.oneOf(['alice@localhost/one', 'alice@localhost/two']);
    }
    expect(await rosterItems(two)).to.deep.equal([{ jid: 'bob@localhost', subscription: 'none', name: 'Bob', groups: ['Friends', 'Work'] }]);

    const renamed = Promise.all([nextPush(one, 'bob@localhost'), nextPush(two, 'bob@localhost')]);
    await rosterSet(two, xml('item', { jid: 'bob@localhost', name: 'Robert' }, xml('group', {}, 'Family')));
    for (const push of await renamed) expect(pushedItem(push)).to.deep.equal({ jid: 'bob@localhost', subscription: 'none', name: 'Robert', groups: ['Family'] });

    const removed = Promise.all([nextPush(one, 'bob@localhost'), nextPush(two, 'bob@localhost')]);
    await rosterSet(one, xml('item', { jid: 'bob@localhost', subscription: 'remove' }));
    for (const push of await removed) expect(pushedItem(push)).to.deep.equal({ jid: 'bob@localhost', subscription: 'remove' });
    expect(await rosterItems(one)).to.deep.equal([]);
    // Once it asks, it gets them.
    await atThree.proveWith(async () => {
      await rosterGet(three);
      await rosterSet(one, xml('item', { jid: 'probe@localhost' }));
    }, (s) => isPush(s, 'probe@localhost'));
    const gone = nextPush(three, 'probe@localhost');
    await rosterSet(one, xml('item', { jid: 'probe@localhost', subscription: 'remove' }));
    await gone;
  });

  it('answers an up-to-date roster version with an empty result and an old one with the roster', async () => {
    const c = await connect('carol', 'v', false);
    const first = (await rosterGet(c, '')).getChild('query', NS_ROSTER)!;
    const v1 = first.attrs.ver!;
    expect(v1).to.be.a('string');
    const upToDate = await rosterGet(c, v1);
    expect(upToDate.attrs.type).to.equal('result');
    expect(upToDate.getChildElements()).to.have.length(0);

    const push = nextPush(c, 'dave@localhost');
    await rosterSet(c, xml('item', { jid: 'dave@localhost' }));
    const v2 = (await push).getChild('query', NS_ROSTER)!.attrs.ver!;
    expect(v2).to.not.equal(v1);

    const stale = (await rosterGet(c, v1)).getChild('query', NS_ROSTER)!;
    expect(stale.attrs.ver).to.equal(v2);
    expect(stale.getChildren('item').map(view)).to.deep.equal([{ jid: 'dave@localhost', subscription: 'none' }]);
    expect((await rosterGet(c, v2)).getChildElements()).to.have.length(0);
    // A client that does not speak XEP-0237 gets no version.
    expect((await rosterGet(c)).getChild('query', NS_ROSTER)!.attrs.ver).to.equal(undefined);
  });

  it('refuses bad roster sets with the errors of RFC 6121', async () => {
    const c = await connect('erin', 'e', false);
    const set = (...items: Element[]) => c.iqCaller.request(xml('iq', { type: 'set' }, xml('query', { xmlns: NS_ROSTER }, ...items)));
    await expectIqError(set(xml('item', { jid: 'a@localhost' }), xml('item', { jid: 'b@localhost' })), 'bad-request');
    await expectIqError(set(), 'bad-request');
    await expectIqError(set(xml('item', {})), 'bad-request');
    await expectIqError(set(xml('item', { jid: 'a@b@c' })), 'jid-malformed');
    await expectIqError(set(xml('item', { jid: 'erin@localhost' })), 'not-allowed');
    await expectIqError(set(xml('item', { jid: 'a@localhost/res' })), 'bad-request');
    await expectIqError(set(xml('item', { jid: 'a@localhost' }, xml('group', {}, ''))), 'not-acceptable');
    await expectIqError(set(xml('item', { jid: 'a@localhost' }, xml('group', {}, 'g'), xml('group', {}, 'g'))), 'bad-request');
    await expectIqError(set(xml('item', { jid: 'a@localhost' }, xml('group', {}, 'x'.repeat(192)))), 'not-acceptable');
    await expectIqError(set(xml('item', { jid: 'a@localhost', name: 'n'.repeat(1024) })), 'not-acceptable');
    await expectIqError(set(xml('item', { jid: 'nobody@localhost', subscription: 'remove' })), 'item-not-found');
    // Another account's roster is not yours to read or change.
    await expectIqError(c.iqCaller.request(xml('iq', { type: 'get', to: 'frank@localhost' }, xml('query', { xmlns: NS_ROSTER }))), 'forbidden');
    await expectIqError(c.iqCaller.request(xml('iq', { type: 'set', to: 'frank@localhost' }, xml('query', { xmlns: NS_ROSTER }, xml('item', { jid: 'x@localhost' })))), 'forbidden');
    // The subscription state is the server's: a 'both' in a roster set is ignored.
    await set(xml('item', { jid: 'a@localhost', subscription: 'both', ask: 'subscribe' }));
    expect(await rosterItems(c)).to.deep.equal([{ jid: 'a@localhost', subscription: 'none' }]);
  });

  it('refuses a new item beyond max_roster_size with <not-allowed/>', async () => {
    const c = await connect('frank', 'f', false);
    for (let i = 0; i < 5; i++) await rosterSet(c, xml('item', { jid: `contact${i}@localhost` }));
    await expectIqError(rosterSet(c, xml('item', { jid: 'contact5@localhost' })), 'not-allowed');
    // Changing an item that is there is still fine.
    await rosterSet(c, xml('item', { jid: 'contact0@localhost', name: 'zero' }));
    // So is a subscription request, refused the same way when it would add an item.
    const error = next(c, (s) => s.is('presence') && s.attrs.type === 'error');
    await c.send(xml('presence', { type: 'subscribe', to: 'contact9@localhost', id: 's9' }));
    expect((await error).getChild('error')?.getChild('not-allowed')).to.exist;
  });

  it('goes through none, to, from and both with the subscription handshake, and back', async () => {
    const alice = await connect('gina', 'g');
    const bob = await connect('hank', 'h');
    const G = 'gina@localhost';
    const H = 'hank@localhost';

    // none: gina adds hank to her roster.
    await rosterSet(alice, xml('item', { jid: H, name: 'Hank' }));
    expect(await rosterItems(alice)).to.deep.equal([{ jid: H, subscription: 'none', name: 'Hank' }]);

    // gina asks: "none + pending out" on her side, a request at hank's (from the bare JID).
    let push = nextPush(alice, H);
    const request = next(bob, (s) => s.is('presence') && s.attrs.type === 'subscribe');
    await alice.send(xml('presence', { type: 'subscribe', to: H }));
    expect(pushedItem(await push)).to.deep.equal({ jid: H, subscription: 'none', name: 'Hank', ask: 'subscribe' });
    expect((await request).attrs.from).to.equal(G);
    expect(await rosterItems(alice)).to.deep.equal([{ jid: H, subscription: 'none', name: 'Hank', ask: 'subscribe' }]);
    // A pending request from someone not in the roster is not an item of it.
    expect(await rosterItems(bob)).to.deep.equal([]);

    // hank approves: gina has "to", hank "from"; gina gets hank's presence right away.
    push = nextPush(alice, H);
    let bobPush = nextPush(bob, G);
    const approved = nextPresence(alice, 'subscribed', H);
    const hankPresence = nextPresence(alice, undefined, `${H}/h`);
    await bob.send(xml('presence', { type: 'subscribed', to: G }));
    expect(pushedItem(await bobPush)).to.deep.equal({ jid: G, subscription: 'from' });
    await approved;
    expect(pushedItem(await push)).to.deep.equal({ jid: H, subscription: 'to', name: 'Hank' });
    await hankPresence;
    expect(await rosterItems(alice)).to.deep.equal([{ jid: H, subscription: 'to', name: 'Hank' }]);
    expect(await rosterItems(bob)).to.deep.equal([{ jid: G, subscription: 'from' }]);

    // hank asks back: "from + pending out"; gina approves: both.
    bobPush = nextPush(bob, G);
    const back = next(alice, (s) => s.is('presence') && s.attrs.type === 'subscribe');
    await bob.send(xml('presence', { type: 'subscribe', to: G }));
    expect(pushedItem(await bobPush)).to.deep.equal({ jid: G, subscription: 'from', ask: 'subscribe' });
    await back;
    push = nextPush(alice, H);
    bobPush = nextPush(bob, G);
    const ginaPresence = nextPresence(bob, undefined, `${G}/g`);
    await alice.send(xml('presence', { type: 'subscribed', to: H }));
    expect(pushedItem(await push)).to.deep.equal({ jid: H, subscription: 'both', name: 'Hank' });
    expect(pushedItem(await bobPush)).to.deep.equal({ jid: G, subscription: 'both' });
    await ginaPresence;
    expect(await rosterItems(alice)).to.deep.equal([{ jid: H, subscription: 'both', name: 'Hank' }]);
    expect(await rosterItems(bob)).to.deep.equal([{ jid: G, subscription: 'both' }]);

    // Presence now flows both ways.
    const status = next(bob, (s) => s.is('presence') && s.attrs.from === `${G}/g` && s.getChildText('status') === 'busy');
    await alice.send(xml('presence', {}, xml('show', {}, 'dnd'), xml('status', {}, 'busy')));
    await status;

    // gina unsubscribes from hank: she has "from", he "to"; she sees him go unavailable.
    push = nextPush(alice, H);
    bobPush = nextPush(bob, G);
    const gone = nextPresence(alice, 'unavailable', `${H}/h`);
    await alice.send(xml('presence', { type: 'unsubscribe', to: H }));
    expect(pushedItem(await push)).to.deep.equal({ jid: H, subscription: 'from', name: 'Hank' });
    expect(pushedItem(await bobPush)).to.deep.equal({ jid: G, subscription: 'to' });
    await gone;

    // gina cancels hank's subscription: none on both sides; he sees her go unavailable.
    push = nextPush(alice, H);
    bobPush = nextPush(bob, G);
    const ginaGone = nextPresence(bob, 'unavailable', `${G}/g`);
    await alice.send(xml('presence', { type: 'unsubscribed', to: H }));
    expect(pushedItem(await push)).to.deep.equal({ jid: H, subscription: 'none', name: 'Hank' });
    expect(pushedItem(await bobPush)).to.deep.equal({ jid: G, subscription: 'none' });
    await ginaGone;
    expect(await rosterItems(alice)).to.deep.equal([{ jid: H, subscription: 'none', name: 'Hank' }]);
    expect(await rosterItems(bob)).to.deep.equal([{ jid: G, subscription: 'none' }]);

    // Removing the item cancels whatever is left and pushes the removal.
    push = nextPush(alice, H);
    await rosterSet(alice, xml('item', { jid: H, subscription: 'remove' }));
    expect(pushedItem(await push)).to.deep.equal({ jid: H, subscription: 'remove' });
  });

  it('stores a request for an offline account and delivers it at each login until answered', async () => {
    const ivan = await connect('ivan', 'i');
    const push = nextPush(ivan, 'judy@localhost');
    await ivan.send(xml('presence', { type: 'subscribe', to: 'judy@localhost' }, xml('status', {}, 'it is Ivan')));
    expect(pushedItem(await push).ask).to.equal('subscribe');

    for (const round of [1, 2]) {
      const judy = await login(t, { user: 'judy', password: 'judy-pw', resource: `j${round}` });
      clients.push(judy);
      await rosterGet(judy, '');
      const request = next(judy, (s) => s.is('presence') && s.attrs.type === 'subscribe');
      await judy.send(xml('presence'));
      const stanza = await request;
      expect(stanza.attrs.from).to.equal('ivan@localhost');
      expect(stanza.getChildText('status')).to.equal('it is Ivan');
      if (round === 1) await stopAll(clients.pop());
      else {
        // judy denies: ivan's request is gone ("none", no ask), and so is the stored request.
        const denied = nextPresence(ivan, 'unsubscribed', 'judy@localhost');
        const cleared = nextPush(ivan, 'judy@localhost');
        await judy.send(xml('presence', { type: 'unsubscribed', to: 'ivan@localhost' }));
        await denied;
        expect(pushedItem(await cleared)).to.deep.equal({ jid: 'judy@localhost', subscription: 'none' });
      }
    }
    await stopAll(clients.pop());
    // A request still waiting, from carol, comes at the next login; ivan's, answered, does not.
    const carol = await connect('carol', 'ask');
    const carolPush = nextPush(carol, 'judy@localhost');
    await carol.send(xml('presence', { type: 'subscribe', to: 'judy@localhost' }));
    await carolPush;
    const judy = await login(t, { user: 'judy', password: 'judy-pw', resource: 'j3' });
    clients.push(judy);
    const seen = expectSilence(judy, (s) => s.is('presence') && s.attrs.type === 'subscribe' && s.attrs.from === 'ivan@localhost', 'the request judy denied');
    // Stored requests are all sent as the initial presence is handled: before the answer to the roster get after it.
    await seen.proveWith(async () => {
      await judy.send(xml('presence'));
      await rosterGet(judy);
    }, (s) => s.is('presence') && s.attrs.type === 'subscribe' && s.attrs.from === 'carol@localhost');
    const denied = nextPresence(carol, 'unsubscribed', 'judy@localhost');
    await judy.send(xml('presence', { type: 'unsubscribed', to: 'carol@localhost' }));
    await denied;
  });

  it('drops an approval nobody asked for, and keeps it as a pre-approval on the sender\'s side', async () => {
    const alice = await connect('alice', 'pre');
    const dave = await connect('dave', 'pre');
    const atAlice = expectSilence(alice, (s) => s.is('presence') && s.attrs.type === 'subscribed', 'an approval nobody asked for');
    const davePush = nextPush(dave, 'alice@localhost');
    await dave.send(xml('presence', { type: 'subscribed', to: 'alice@localhost' }));
    expect(pushedItem(await davePush)).to.deep.equal({ jid: 'alice@localhost', subscription: 'none', approved: 'true' });
    expect(await rosterItems(alice)).to.not.deep.include({ jid: 'dave@localhost', subscription: 'to' });

    // alice asks: approved at once (the first approval she sees), dave is never asked.
    const atDave = expectSilence(dave, (s) => s.is('presence') && s.attrs.type === 'subscribe', 'a request the pre-approval answered');
    const alicePush = next(alice, (s) => isPush(s, 'dave@localhost') && pushedItem(s).subscription === 'to');
    const fromDave = nextPresence(alice, undefined, 'dave@localhost/pre');
    await atAlice.proveWith(() => alice.send(xml('presence', { type: 'subscribe', to: 'dave@localhost' })), (s) => isPresenceFrom(s, 'subscribed', 'dave@localhost'));
    await alicePush;
    await fromDave;
    expect(await rosterItems(dave)).to.deep.equal([{ jid: 'alice@localhost', subscription: 'from' }]);
    // A request nobody approved in advance does reach him.
    const erin = await connect('erin', 'pre');
    await atDave.proveWith(() => erin.send(xml('presence', { type: 'subscribe', to: 'dave@localhost' })), (s) => isPresenceFrom(s, 'subscribe', 'erin@localhost'));
  });

  it('unregistering an account deletes its roster and unsubscribes its contacts', async () => {
    await t.server.services.accounts.register('temp', 'localhost', 'temp-pw');
    const temp = await connect('temp', 't');
    const bob = await connect('bob', 'b');
    await temp.send(xml('presence', { type: 'subscribe', to: 'bob@localhost' }));
    await next(bob, (s) => s.is('presence') && s.attrs.type === 'subscribe');
    const subscribed = nextPresence(temp, 'subscribed', 'bob@localhost');
    await bob.send(xml('presence', { type: 'subscribed', to: 'temp@localhost' }));
    await subscribed;
    await bob.send(xml('presence', { type: 'subscribe', to: 'temp@localhost' }));
    await next(temp, (s) => s.is('presence') && s.attrs.type === 'subscribe');
    const approved = nextPresence(bob, 'subscribed', 'temp@localhost');
    await temp.send(xml('presence', { type: 'subscribed', to: 'bob@localhost' }));
    await approved;
    expect(await rosterItems(bob)).to.deep.include({ jid: 'temp@localhost', subscription: 'both' });

    const bobPush = next(bob, (s) => isPush(s, 'temp@localhost') && pushedItem(s).subscription === 'none');
    const offline = nextPresence(bob, 'unavailable', 'temp@localhost/t');
    const res = await t.api('unregister', { user: 'temp', host: 'localhost' }, { basic: ADMIN });
    expect(res.status, res.text).to.equal(200);
    await bobPush;
    await offline;
    const db = t.server.services.storage.db('sql');
    for (const table of ['roster_items', 'roster_groups', 'roster_versions']) {
      expect(await db(table).where({ host: 'localhost', username: 'temp' })).to.have.length(0);
    }
    // Created again, the account starts with an empty roster.
    await t.server.services.accounts.register('temp', 'localhost', 'temp-pw');
    const again = await connect('temp', 't2', false);
    expect(await rosterItems(again)).to.deep.equal([]);
  });
});

for (const database of testDatabases()) {
  describe(`roster storage on ${database.name}`, () => {
    let t: TestServer;
    const clients: Client[] = [];

    before(async () => {
      const settings = await database.settings('/tmp');
      const config = { ...xmppConfig(MODULES), ...serverSqlConfig(settings) };
      t = await TestServer.start(config);
      await t.bootstrapAdmin();
      // Only ASCII names log in: @xmpp/client encodes SASL credentials with btoa (Latin-1, not UTF-8).
      for (const user of ['alice', 'bob', 'carl']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    });
    afterEach(async () => {
      await stopAll(...clients.splice(0));
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    it('stores names and groups exactly, groups that differ only by case included', async () => {
      const alice = await online(t, 'alice', 'a', false);
      clients.push(alice);
      await rosterSet(alice, xml('item', { jid: 'bob@localhost', name: 'Bob ✓' }, xml('group', {}, 'friends'), xml('group', {}, 'Friends'), xml('group', {}, 'Équipe')));
      await rosterSet(alice, xml('item', { jid: 'émile@localhost' }));
      expect(await rosterItems(alice)).to.deep.equal([
        { jid: 'bob@localhost', subscription: 'none', name: 'Bob ✓', groups: ['Friends', 'friends', 'Équipe'] },
        { jid: 'émile@localhost', subscription: 'none' },
      ]);
      await rosterSet(alice, xml('item', { jid: 'bob@localhost', name: 'Bob ✓' }, xml('group', {}, 'Work')));
      expect((await rosterItems(alice))[0]).to.deep.equal({ jid: 'bob@localhost', subscription: 'none', name: 'Bob ✓', groups: ['Work'] });
    });

    it('keeps subscription states and the pending request of an offline account', async () => {
      const alice = await online(t, 'alice', 'a');
      clients.push(alice);
      const sent = nextPush(alice, 'carl@localhost');
      await alice.send(xml('presence', { type: 'subscribe', to: 'carl@localhost' }));
      expect(pushedItem(await sent).ask).to.equal('subscribe');

      const carl = await login(t, { user: 'carl', password: 'carl-pw', resource: 'e' });
      clients.push(carl);
      await rosterGet(carl, '');
      const request = next(carl, (s) => s.is('presence') && s.attrs.type === 'subscribe');
      await carl.send(xml('presence'));
      expect((await request).attrs.from).to.equal('alice@localhost');
      const approved = next(alice, (s) => isPush(s, 'carl@localhost') && pushedItem(s).subscription === 'to');
      await carl.send(xml('presence', { type: 'subscribed', to: 'alice@localhost' }));
      await approved;
      expect(await rosterItems(carl)).to.deep.equal([{ jid: 'alice@localhost', subscription: 'from' }]);
      expect(await rosterItems(alice)).to.deep.equal([
        { jid: 'bob@localhost', subscription: 'none', name: 'Bob ✓', groups: ['Work'] },
        { jid: 'carl@localhost', subscription: 'to' },
        { jid: 'émile@localhost', subscription: 'none' },
      ]);
    });

    it('moves the roster version on with every change', async () => {
      const bob = await online(t, 'bob', 'b', false);
      clients.push(bob);
      const v1 = (await rosterGet(bob, '')).getChild('query', NS_ROSTER)!.attrs.ver!;
      const push = nextPush(bob, 'alice@localhost');
      await rosterSet(bob, xml('item', { jid: 'alice@localhost' }));
      const v2 = (await push).getChild('query', NS_ROSTER)!.attrs.ver!;
      expect(Number(v2)).to.be.greaterThan(Number(v1));
      expect((await rosterGet(bob, v2)).getChildElements()).to.have.length(0);
      expect((await rosterGet(bob, v1)).getChild('query', NS_ROSTER)!.getChildren('item').map(view)).to.deep.equal([{ jid: 'alice@localhost', subscription: 'none' }]);
    });

    it('deletes the roster of an unregistered account', async () => {
      const res = await t.api('unregister', { user: 'alice', host: 'localhost' }, { basic: ADMIN });
      expect(res.status, res.text).to.equal(200);
      const db = t.server.services.storage.db('sql');
      for (const table of ['roster_items', 'roster_groups', 'roster_versions']) {
        expect(await db(table).where({ host: 'localhost', username: 'alice' })).to.have.length(0);
      }
      // Contacts are unsubscribed: carl no longer sends alice presence.
      const carl = await online(t, 'carl', 'e2', false);
      clients.push(carl);
      expect(await rosterItems(carl)).to.deep.equal([{ jid: 'alice@localhost', subscription: 'none' }]);
    });
  });
}
