/**
 * Privacy lists (XEP-0016) and the blocking command (XEP-0191) with real clients: list and blocklist
 * management, pushes, what a blocked sender gets back, what the user gets when sending to someone they
 * block, and removal with the account.
 */
import { expect } from 'chai';
import { TestServer } from '../support/server.js';
import { collect, login, next, stopAll, subscribe, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

const PRIVACY = 'jabber:iq:privacy';
const BLOCKING = 'urn:xmpp:blocking';
const ADMIN = { basic: 'admin@localhost:adminpass' };

const settle = (ms = 200) => new Promise((resolve) => setTimeout(resolve, ms));

async function request(client: Client, type: 'get' | 'set', payload: Element, to?: string): Promise<Element> {
  return client.iqCaller.request(xml('iq', { type, to }, payload));
}

async function refusal(client: Client, type: 'get' | 'set', payload: Element, to?: string): Promise<string> {
  try {
    await request(client, type, payload, to);
  } catch (err) {
    return (err as { condition: string }).condition;
  }
  throw new Error('expected an error');
}

function privacy(...children: Element[]): Element {
  return xml('query', { xmlns: PRIVACY }, ...children);
}

function list(name: string, ...items: Element[]): Element {
  return xml('list', { name }, ...items);
}

function item(attrs: Record<string, string>, ...kinds: string[]): Element {
  return xml('item', attrs, ...kinds.map((kind) => xml(kind)));
}

function chat(to: string, body: string, id?: string): Element {
  return xml('message', { to, type: 'chat', id }, xml('body', {}, body));
}

function errorCondition(stanza: Element): string | undefined {
  return stanza.getChild('error')?.getChildElements()[0]?.name;
}

/** Resolves with the messages with `body` the client got within a moment. */
async function receivedBodies(received: Element[], body: string): Promise<Element[]> {
  await settle();
  return received.filter((s) => s.is('message') && s.attrs.type !== 'error' && s.getChildText('body') === body);
}

describe('XMPP privacy lists and blocking', () => {
  let t: TestServer;

  before(async () => {
    t = await TestServer.start(xmppConfig({ mod_roster: {}, mod_presence: {}, mod_privacy: {}, mod_blocking: {}, mod_disco: {} }));
    await t.bootstrapAdmin();
    for (const user of ['alice', 'bob', 'carol', 'dave']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    await t.server.services.accounts.register('eve', 'example.com', 'eve-pw');
  });
  after(() => t.stop());

  describe('privacy lists (XEP-0016)', () => {
    let alice: Client;
    let alice2: Client | undefined;
    let bob: Client;
    let carol: Client;

    beforeEach(async () => {
      alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'home' });
      bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b' });
      carol = await login(t, { user: 'carol', password: 'carol-pw', resource: 'c' });
    });
    afterEach(async () => {
      await stopAll(alice, alice2, bob, carol);
      alice2 = undefined;
      // Start every test from no lists.
      const cleaner = await login(t, { user: 'alice', password: 'alice-pw', resource: 'cleaner' });
      // The default list can only be declined once no other resource uses it.
      while (t.server.services.xmpp.sessions.byAccount('alice@localhost').length > 1) await settle(20);
      try {
        await request(cleaner, 'set', privacy(xml('default')));
        const names = await request(cleaner, 'get', privacy());
        for (const l of names.getChild('query')!.getChildren('list')) await request(cleaner, 'set', privacy(list(l.attrs.name!)));
      } finally {
        await stopAll(cleaner);
      }
    });

    it('stores, lists, returns and pushes a list; removes it', async () => {
      alice2 = await login(t, { user: 'alice', password: 'alice-pw', resource: 'work' });
      const push = next(alice2, (s) => s.is('iq') && s.attrs.type === 'set' && s.getChild('query', PRIVACY) !== undefined);
      await request(
        alice,
        'set',
        privacy(list('public', item({ type: 'jid', value: 'Bob@LocalHost', action: 'deny', order: '3' }, 'message'), item({ action: 'allow', order: '68' }))),
      );
      const pushed = await push;
      expect(pushed.attrs.to).to.equal('alice@localhost/work');
      expect(pushed.getChild('query', PRIVACY)!.getChild('list')!.attrs.name).to.equal('public');
      expect(pushed.getChild('query', PRIVACY)!.getChild('list')!.getChildElements()).to.have.length(0);

      await request(alice, 'set', privacy(list('special', item({ type: 'subscription', value: 'none', action: 'deny', order: '1' }))));
      const names = (await request(alice, 'get', privacy())).getChild('query', PRIVACY)!;
      expect(names.getChildren('list').map((l) => l.attrs.name)).to.deep.equal(['public', 'special']);
      expect(names.getChild('default')).to.equal(undefined);

      const got = (await request(alice, 'get', privacy(list('public')))).getChild('query', PRIVACY)!.getChild('list')!;
      const items = got.getChildren('item');
      expect(items).to.have.length(2);
      expect(items[0]!.attrs).to.deep.equal({ type: 'jid', value: 'bob@localhost', action: 'deny', order: '3' });
      expect(items[0]!.getChildElements().map((c) => c.name)).to.deep.equal(['message']);
      expect(items[1]!.attrs).to.deep.equal({ action: 'allow', order: '68' });

      await request(alice, 'set', privacy(list('special')));
      const after = (await request(alice, 'get', privacy())).getChild('query', PRIVACY)!;
      expect(after.getChildren('list').map((l) => l.attrs.name)).to.deep.equal(['public']);
    });

    it('answers bad requests and unknown lists as the XEP says', async () => {
      expect(await refusal(alice, 'get', privacy(list('nope')))).to.equal('item-not-found');
      expect(await refusal(alice, 'get', privacy(list('a'), list('b')))).to.equal('bad-request');
      expect(await refusal(alice, 'set', privacy(xml('active', { name: 'nope' })))).to.equal('item-not-found');
      expect(await refusal(alice, 'set', privacy(xml('default', { name: 'nope' })))).to.equal('item-not-found');
      expect(await refusal(alice, 'set', privacy(list('nope')))).to.equal('item-not-found');
      expect(await refusal(alice, 'set', privacy(xml('active'), xml('default')))).to.equal('bad-request');
      const duplicate = list('dup', item({ action: 'deny', order: '1' }), item({ action: 'allow', order: '1' }));
      expect(await refusal(alice, 'set', privacy(duplicate))).to.equal('bad-request');
      expect(await refusal(alice, 'set', privacy(list('x', item({ action: 'maybe', order: '1' }))))).to.equal('bad-request');
      expect(await refusal(alice, 'set', privacy(list('x', item({ action: 'deny', order: '-1' }))))).to.equal('bad-request');
      expect(await refusal(alice, 'set', privacy(list('x', item({ type: 'subscription', value: 'sometimes', action: 'deny', order: '1' }))))).to.equal('bad-request');
      expect(await refusal(bob, 'get', privacy(), 'alice@localhost')).to.equal('forbidden');
    });

    it('a default list keeps a denied sender out (service-unavailable) and lets others in', async () => {
      await request(alice, 'set', privacy(list('no-bob', item({ type: 'jid', value: 'bob@localhost', action: 'deny', order: '1' }, 'message', 'iq'))));
      await request(alice, 'set', privacy(xml('default', { name: 'no-bob' })));
      const atAlice = collect(alice);

      const bounced = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
      await bob.send(chat('alice@localhost/home', 'from bob', 'm1'));
      const error = await bounced;
      expect(error.attrs.id).to.equal('m1');
      expect(errorCondition(error)).to.equal('service-unavailable');
      expect(await refusal(bob, 'get', xml('query', { xmlns: 'jabber:iq:version' }), 'alice@localhost/home')).to.equal('service-unavailable');

      await carol.send(chat('alice@localhost/home', 'from carol'));
      expect(await receivedBodies(atAlice, 'from carol')).to.have.length(1);
      expect(await receivedBodies(atAlice, 'from bob')).to.have.length(0);

      const names = (await request(alice, 'get', privacy())).getChild('query', PRIVACY)!;
      expect(names.getChild('default')!.attrs.name).to.equal('no-bob');
      // The default list cannot be removed while it is the default.
      expect(await refusal(alice, 'set', privacy(list('no-bob')))).to.equal('conflict');
    });

    it('an active list applies to its session only, instead of the default', async () => {
      alice2 = await login(t, { user: 'alice', password: 'alice-pw', resource: 'work' });
      await request(alice, 'set', privacy(list('no-carol', item({ type: 'jid', value: 'carol@localhost', action: 'deny', order: '1' }))));
      await request(alice, 'set', privacy(list('no-bob', item({ type: 'jid', value: 'bob@localhost', action: 'deny', order: '1' }))));
      await request(alice, 'set', privacy(xml('default', { name: 'no-carol' })));
      await request(alice, 'set', privacy(xml('active', { name: 'no-bob' })));
      expect((await request(alice, 'get', privacy())).getChild('query', PRIVACY)!.getChild('active')!.attrs.name).to.equal('no-bob');
      const atHome = collect(alice);
      const atWork = collect(alice2);

      const bounced = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
      await bob.send(chat('alice@localhost/home', 'bob to home'));
      expect(errorCondition(await bounced)).to.equal('service-unavailable');
      await bob.send(chat('alice@localhost/work', 'bob to work'));
      // No layering: the active list replaces the default one, so carol reaches the session with it.
      await carol.send(chat('alice@localhost/home', 'carol to home'));
      const carolRefused = next(carol, (s) => s.is('message') && s.attrs.type === 'error');
      await carol.send(chat('alice@localhost/work', 'carol to work'));
      expect(errorCondition(await carolRefused)).to.equal('service-unavailable');

      expect(await receivedBodies(atHome, 'bob to home')).to.have.length(0);
      expect(await receivedBodies(atWork, 'bob to work')).to.have.length(1);
      expect(await receivedBodies(atHome, 'carol to home')).to.have.length(1);
      expect(await receivedBodies(atWork, 'carol to work')).to.have.length(0);

      // Another resource cannot remove the list active here, nor change the default it uses.
      expect(await refusal(alice2, 'set', privacy(list('no-bob')))).to.equal('conflict');
      expect(await refusal(alice, 'set', privacy(xml('default')))).to.equal('conflict');
      // Declining the active list brings the default back.
      await request(alice, 'set', privacy(xml('active')));
      const again = next(bob, (s) => s.is('message') && s.getChildText('body') === 'bob again');
      await alice.send(chat('bob@localhost/b', 'bob again'));
      await again;
      await bob.send(chat('alice@localhost/home', 'bob after decline'));
      expect(await receivedBodies(atHome, 'bob after decline')).to.have.length(1);
    });

    describe('a message to the bare JID, fanned out to sessions of equal priority (§2.13, RFC 6120 §8.3)', () => {
      const noBob = list('nobob', item({ type: 'jid', value: 'bob@localhost', action: 'deny', order: '1' }, 'message'));

      /** Both of alice's sessions available at priority 0, so that a message to her bare JID goes to both. */
      beforeEach(async () => {
        alice2 = await login(t, { user: 'alice', password: 'alice-pw', resource: 'work' });
        for (const session of [alice, alice2]) await session.send(xml('presence'));
        await request(alice, 'set', privacy(noBob));
      });

      /** The errors bob got for the message `id`, once the server had time to answer more than once. */
      async function bouncesAtBob(atBob: Element[], id: string): Promise<Element[]> {
        await settle(400);
        return atBob.filter((s) => s.is('message') && s.attrs.type === 'error' && s.attrs.id === id);
      }

      it('is not bounced when another session received it', async () => {
        await request(alice, 'set', privacy(xml('active', { name: 'nobob' })));
        const atHome = collect(alice);
        const atWork = collect(alice2!);
        const atBob = collect(bob);
        await bob.send(chat('alice@localhost', 'bare to alice', 'VV1'));
        expect(await receivedBodies(atWork, 'bare to alice')).to.have.length(1);
        expect(await receivedBodies(atHome, 'bare to alice')).to.have.length(0);
        // The sender would be told the message was not delivered when it was.
        expect(await bouncesAtBob(atBob, 'VV1')).to.have.length(0);
      });

      it('is bounced once when every session refused it', async () => {
        for (const session of [alice, alice2!]) await request(session, 'set', privacy(xml('active', { name: 'nobob' })));
        const atHome = collect(alice);
        const atWork = collect(alice2!);
        const atBob = collect(bob);
        await bob.send(chat('alice@localhost', 'refused by both', 'VV2'));
        const bounces = await bouncesAtBob(atBob, 'VV2');
        expect(bounces).to.have.length(1);
        expect(errorCondition(bounces[0]!)).to.equal('service-unavailable');
        expect(await receivedBodies(atHome, 'refused by both')).to.have.length(0);
        expect(await receivedBodies(atWork, 'refused by both')).to.have.length(0);
      });

      it('is bounced once when sent to the full JID of the session that refuses it', async () => {
        await request(alice, 'set', privacy(xml('active', { name: 'nobob' })));
        const atWork = collect(alice2!);
        const atBob = collect(bob);
        await bob.send(chat('alice@localhost/home', 'to home only', 'VV3'));
        const bounces = await bouncesAtBob(atBob, 'VV3');
        expect(bounces).to.have.length(1);
        expect(errorCondition(bounces[0]!)).to.equal('service-unavailable');
        // A full JID names one session: the other one is not offered what that one refused.
        expect(await receivedBodies(atWork, 'to home only')).to.have.length(0);
      });
    });

    it('refuses what the user sends to a JID their list blocks entirely with <not-acceptable/>', async () => {
      await request(alice, 'set', privacy(list('cut-bob', item({ type: 'jid', value: 'bob@localhost', action: 'deny', order: '1' }))));
      await request(alice, 'set', privacy(xml('active', { name: 'cut-bob' })));
      const atBob = collect(bob);
      const refused = next(alice, (s) => s.is('message') && s.attrs.type === 'error');
      await alice.send(chat('bob@localhost/b', 'to bob', 'out1'));
      const error = await refused;
      expect(error.attrs.id).to.equal('out1');
      expect(errorCondition(error)).to.equal('not-acceptable');
      expect(await receivedBodies(atBob, 'to bob')).to.have.length(0);
      // A message-only item does not block outbound messages (it is about incoming ones).
      await request(alice, 'set', privacy(list('cut-bob', item({ type: 'jid', value: 'bob@localhost', action: 'deny', order: '1' }, 'message'))));
      await alice.send(chat('bob@localhost/b', 'to bob again'));
      expect(await receivedBodies(atBob, 'to bob again')).to.have.length(1);
    });

    it('blocks presence by presence-in and presence-out', async () => {
      await request(alice, 'set', privacy(list('quiet', item({ type: 'jid', value: 'bob@localhost', action: 'deny', order: '1' }, 'presence-in', 'presence-out'))));
      await request(alice, 'set', privacy(xml('active', { name: 'quiet' })));
      const atAlice = collect(alice);
      const atBob = collect(bob);
      await bob.send(xml('presence', { to: 'alice@localhost/home' }, xml('status', {}, 'bob here')));
      await carol.send(xml('presence', { to: 'alice@localhost/home' }, xml('status', {}, 'carol here')));
      const refused = next(alice, (s) => s.is('presence') && s.attrs.type === 'error');
      await alice.send(xml('presence', { to: 'bob@localhost/b' }, xml('status', {}, 'alice here')));
      expect(errorCondition(await refused)).to.equal('not-acceptable');
      await settle();
      expect(atAlice.filter((s) => s.is('presence') && s.getChildText('status') === 'bob here')).to.have.length(0);
      expect(atAlice.filter((s) => s.is('presence') && s.getChildText('status') === 'carol here')).to.have.length(1);
      expect(atBob.filter((s) => s.is('presence') && s.getChildText('status') === 'alice here')).to.have.length(0);
    });

    it('applies group and subscription items from the roster (mod_roster)', async function () {
      const roster = (...items: Element[]) => xml('query', { xmlns: 'jabber:iq:roster' }, ...items);
      if ((await refusal(alice, 'get', roster()).catch(() => 'answered')) === 'service-unavailable') this.skip();
      await request(alice, 'set', roster(xml('item', { jid: 'carol@localhost' }, xml('group', {}, 'Friends'))));
      try {
        // §2.1: a group item names a group of the roster.
        expect(await refusal(alice, 'set', privacy(list('x', item({ type: 'group', value: 'Strangers', action: 'deny', order: '1' }))))).to.equal('item-not-found');
        await request(
          alice,
          'set',
          privacy(list('friends-only', item({ type: 'group', value: 'Friends', action: 'allow', order: '1' }), item({ type: 'subscription', value: 'none', action: 'deny', order: '2' }, 'message'))),
        );
        await request(alice, 'set', privacy(xml('active', { name: 'friends-only' })));
        const atAlice = collect(alice);
        await carol.send(chat('alice@localhost/home', 'friend'));
        const bounced = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
        await bob.send(chat('alice@localhost/home', 'stranger'));
        expect(errorCondition(await bounced)).to.equal('service-unavailable');
        expect(await receivedBodies(atAlice, 'friend')).to.have.length(1);
        expect(await receivedBodies(atAlice, 'stranger')).to.have.length(0);
      } finally {
        await request(alice, 'set', roster(xml('item', { jid: 'carol@localhost', subscription: 'remove' })));
      }
    });
    it('presence-out stops the broadcast of presence to a subscriber (mod_presence)', async () => {
      // Bob and carol, online, subscribe to alice's presence.
      await alice.send(xml('presence'));
      for (const [contact, name] of [[bob, 'bob'], [carol, 'carol']] as const) {
        await contact.send(xml('presence'));
        await subscribe(contact, `${name}@localhost`, alice, 'alice@localhost');
      }
      await request(
        alice,
        'set',
        privacy(list('hide-from-bob', item({ type: 'jid', value: 'bob@localhost', action: 'deny', order: '1' }, 'presence-out'), item({ type: 'subscription', value: 'from', action: 'allow', order: '2' }))),
      );
      await request(alice, 'set', privacy(xml('active', { name: 'hide-from-bob' })));
      const atBob = collect(bob);
      const atCarol = next(carol, (s) => s.is('presence') && s.getChildText('status') === 'visible');
      await alice.send(xml('presence', {}, xml('status', {}, 'visible')));
      expect((await atCarol).attrs.from).to.equal('alice@localhost/home');
      await settle();
      expect(atBob.filter((s) => s.is('presence') && s.getChildText('status') === 'visible')).to.have.length(0);
    });
  });

  describe('blocking command (XEP-0191)', () => {
    let alice: Client;
    let alice2: Client;
    let alice3: Client;
    let bob: Client;
    let eve: Client;

    beforeEach(async () => {
      alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'one' });
      alice2 = await login(t, { user: 'alice', password: 'alice-pw', resource: 'two' });
      alice3 = await login(t, { user: 'alice', password: 'alice-pw', resource: 'three' });
      bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b' });
      eve = await login(t, { user: 'eve', password: 'eve-pw', host: 'example.com', resource: 'e' });
      await request(alice2, 'get', xml('blocklist', { xmlns: BLOCKING }));
    });
    afterEach(async () => {
      await request(alice, 'set', xml('unblock', { xmlns: BLOCKING }));
      await stopAll(alice, alice2, alice3, bob, eve);
    });

    it('blocks, lists, and pushes to the resources that asked for the blocklist', async () => {
      const atThree = collect(alice3);
      const push = next(alice2, (s) => s.is('iq') && s.attrs.type === 'set' && s.getChild('block', BLOCKING) !== undefined);
      await request(alice, 'set', xml('block', { xmlns: BLOCKING }, xml('item', { jid: 'Bob@LocalHost' }), xml('item', { jid: 'example.com' })));
      const pushed = await push;
      expect(pushed.attrs.to).to.equal('alice@localhost/two');
      expect(pushed.getChild('block', BLOCKING)!.getChildren('item').map((i) => i.attrs.jid)).to.deep.equal(['bob@localhost', 'example.com']);
      const listed = await request(alice, 'get', xml('blocklist', { xmlns: BLOCKING }));
      expect(listed.getChild('blocklist', BLOCKING)!.getChildren('item').map((i) => i.attrs.jid)).to.deep.equal(['bob@localhost', 'example.com']);
      await settle();
      // The third resource never asked for the blocklist: no pushes for it.
      expect(atThree.filter((s) => s.is('iq') && s.getChild('block', BLOCKING))).to.have.length(0);

      const unpush = next(alice2, (s) => s.is('iq') && s.attrs.type === 'set' && s.getChild('unblock', BLOCKING) !== undefined);
      await request(alice, 'set', xml('unblock', { xmlns: BLOCKING }, xml('item', { jid: 'example.com' })));
      expect((await unpush).getChild('unblock', BLOCKING)!.getChildren('item').map((i) => i.attrs.jid)).to.deep.equal(['example.com']);
      const allPush = next(alice2, (s) => s.is('iq') && s.attrs.type === 'set' && s.getChild('unblock', BLOCKING) !== undefined);
      await request(alice, 'set', xml('unblock', { xmlns: BLOCKING }));
      expect((await allPush).getChild('unblock', BLOCKING)!.getChildren('item')).to.have.length(0);
      const empty = await request(alice, 'get', xml('blocklist', { xmlns: BLOCKING }));
      expect(empty.getChild('blocklist', BLOCKING)!.getChildren('item')).to.have.length(0);
    });

    it('answers a block without items with <bad-request/>, a bad JID with <jid-malformed/>', async () => {
      expect(await refusal(alice, 'set', xml('block', { xmlns: BLOCKING }))).to.equal('bad-request');
      expect(await refusal(alice, 'set', xml('block', { xmlns: BLOCKING }, xml('item', { jid: 'a@b@c' })))).to.equal('jid-malformed');
      expect(await refusal(bob, 'get', xml('blocklist', { xmlns: BLOCKING }), 'alice@localhost')).to.equal('forbidden');
    });

    it('does not deliver from a blocked JID (service-unavailable) and refuses sending to it with <blocked/>', async () => {
      await alice.send(xml('presence'));
      await bob.send(xml('presence'));
      // Bob is subscribed to alice's presence: he is told when she blocks him.
      await subscribe(bob, 'bob@localhost', alice, 'alice@localhost');
      const unavailable = next(bob, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === 'alice@localhost/one');
      await request(alice, 'set', xml('block', { xmlns: BLOCKING }, xml('item', { jid: 'bob@localhost' })));
      // §3.3: the blocked contact sees the user go offline.
      await unavailable;
      const atAlice = collect(alice);

      const bounced = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
      await bob.send(chat('alice@localhost/one', 'let me in', 'b1'));
      const error = await bounced;
      expect(error.attrs.id).to.equal('b1');
      expect(errorCondition(error)).to.equal('service-unavailable');
      expect(await refusal(bob, 'get', xml('query', { xmlns: 'jabber:iq:version' }), 'alice@localhost/one')).to.equal('service-unavailable');
      // What the server answers for her account is refused too (§3.2): no disco of alice for bob.
      expect(await refusal(bob, 'get', xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' }), 'alice@localhost')).to.equal('service-unavailable');
      // She still gets answers about her own account.
      expect((await request(alice, 'get', xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' }), 'alice@localhost')).attrs.type).to.equal('result');
      await bob.send(xml('presence', { to: 'alice@localhost/one' }));
      expect(await receivedBodies(atAlice, 'let me in')).to.have.length(0);
      expect(atAlice.filter((s) => s.is('presence') && s.attrs.from === 'bob@localhost/b')).to.have.length(0);

      const refused = next(alice, (s) => s.is('message') && s.attrs.type === 'error');
      await alice.send(chat('bob@localhost/b', 'you are blocked', 'a1'));
      const refusalStanza = await refused;
      expect(refusalStanza.attrs.id).to.equal('a1');
      expect(errorCondition(refusalStanza)).to.equal('not-acceptable');
      expect(refusalStanza.getChild('error')!.getChild('blocked', 'urn:xmpp:blocking:errors')).to.exist;

      const back = next(bob, (s) => s.is('presence') && s.attrs.from === 'alice@localhost/one' && s.attrs.type === undefined);
      await request(alice, 'set', xml('unblock', { xmlns: BLOCKING }, xml('item', { jid: 'bob@localhost' })));
      // §3.4: and back online when unblocked.
      await back;
      await bob.send(chat('alice@localhost/one', 'unblocked now'));
      expect(await receivedBodies(atAlice, 'unblocked now')).to.have.length(1);
    });

    it('refuses a message to the bare JID of an account with several sessions once', async () => {
      // Three available sessions at equal priority: the blocklist is the account's, so one refusal in all.
      for (const session of [alice, alice2, alice3]) await session.send(xml('presence'));
      await request(alice, 'set', xml('block', { xmlns: BLOCKING }, xml('item', { jid: 'bob@localhost' })));
      const atBob = collect(bob);
      await bob.send(chat('alice@localhost', 'to all of alice', 'b2'));
      await settle(400);
      const bounces = atBob.filter((s) => s.is('message') && s.attrs.type === 'error' && s.attrs.id === 'b2');
      expect(bounces).to.have.length(1);
      expect(errorCondition(bounces[0]!)).to.equal('service-unavailable');
    });

    it('blocks a whole domain', async () => {
      await request(alice, 'set', xml('block', { xmlns: BLOCKING }, xml('item', { jid: 'example.com' })));
      const bounced = next(eve, (s) => s.is('message') && s.attrs.type === 'error');
      await eve.send(chat('alice@localhost/one', 'from another domain'));
      expect(errorCondition(await bounced)).to.equal('service-unavailable');
      const atAlice = collect(alice);
      await bob.send(chat('alice@localhost/one', 'same domain'));
      expect(await receivedBodies(atAlice, 'same domain')).to.have.length(1);
    });
  });

  it('unregistering an account removes its privacy lists and blocklist', async () => {
    let dave = await login(t, { user: 'dave', password: 'dave-pw' });
    await request(dave, 'set', privacy(list('mine', item({ action: 'deny', order: '1' }, 'message'))));
    await request(dave, 'set', privacy(xml('default', { name: 'mine' })));
    await request(dave, 'set', xml('block', { xmlns: BLOCKING }, xml('item', { jid: 'bob@localhost' })));
    await stopAll(dave);
    const res = await t.api('unregister', { user: 'dave', host: 'localhost' }, ADMIN);
    expect(res.status, res.text).to.equal(200);
    await t.server.services.accounts.register('dave', 'localhost', 'dave-pw');
    dave = await login(t, { user: 'dave', password: 'dave-pw' });
    try {
      const names = (await request(dave, 'get', privacy())).getChild('query', PRIVACY)!;
      expect(names.getChildElements()).to.have.length(0);
      const blocked = await request(dave, 'get', xml('blocklist', { xmlns: BLOCKING }));
      expect(blocked.getChild('blocklist', BLOCKING)!.getChildElements()).to.have.length(0);
    } finally {
      await stopAll(dave);
    }
  });
});
