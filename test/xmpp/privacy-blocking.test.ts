/**
 * Privacy lists (XEP-0016) and the blocking command (XEP-0191) with real clients: list and blocklist
 * management, pushes, what a blocked sender gets back, what the user gets when sending to someone they
 * block, and removal with the account.
 */
import { expect } from 'chai';
import { TestServer } from '../support/server.js';
import { expectSilence, login, next, stopAll, subscribe, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

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

/** A message (not an error) with `body`. */
const withBody = (body: string) => (s: Element) => s.is('message') && s.attrs.type !== 'error' && s.getChildText('body') === body;

/** The error that bounces the message `id` back to its sender. */
const bounceOf = (id: string) => (s: Element) => s.is('message') && s.attrs.type === 'error' && s.attrs.id === id;

/**
 * Waits for the one bounce of the message `id` that `sender` sent, then proves there is no second one: the
 * bounce of the next refused message (`again`, sent the same way) arrives first.
 */
async function bouncedOnce(sender: Client, id: string, again: Element): Promise<Element> {
  const bounce = await next(sender, bounceOf(id));
  const second = expectSilence(sender, bounceOf(id), `a second bounce of ${id}`);
  await second.proveWith(() => sender.send(again), bounceOf(again.attrs.id!));
  return bounce;
}

/** A presence with this status. */
const withStatus = (status: string) => (s: Element) => s.is('presence') && s.getChildText('status') === status;

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
      while (t.server.services.xmpp.localSessions.byAccount('alice@localhost').length > 1) await settle(20);
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
      const atAlice = expectSilence(alice, withBody('from bob'), "a denied sender's message");

      const bounced = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
      await bob.send(chat('alice@localhost/home', 'from bob', 'm1'));
      const error = await bounced;
      expect(error.attrs.id).to.equal('m1');
      expect(errorCondition(error)).to.equal('service-unavailable');
      expect(await refusal(bob, 'get', xml('query', { xmlns: 'jabber:iq:version' }), 'alice@localhost/home')).to.equal('service-unavailable');

      await atAlice.proveWith(() => carol.send(chat('alice@localhost/home', 'from carol')), withBody('from carol'));

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
      const atHome = expectSilence(alice, withBody('bob to home'), 'what the active list denies');
      const atWork = expectSilence(alice2, withBody('carol to work'), 'what the default list denies');

      const bounced = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
      await bob.send(chat('alice@localhost/home', 'bob to home'));
      expect(errorCondition(await bounced)).to.equal('service-unavailable');
      const carolRefused = next(carol, (s) => s.is('message') && s.attrs.type === 'error');
      await carol.send(chat('alice@localhost/work', 'carol to work'));
      expect(errorCondition(await carolRefused)).to.equal('service-unavailable');
      // No layering: the active list replaces the default one, so carol reaches the session with it, and bob the other one.
      await atHome.proveWith(() => carol.send(chat('alice@localhost/home', 'carol to home')), withBody('carol to home'));
      await atWork.proveWith(() => bob.send(chat('alice@localhost/work', 'bob to work')), withBody('bob to work'));

      // Another resource cannot remove the list active here, nor change the default it uses.
      expect(await refusal(alice2, 'set', privacy(list('no-bob')))).to.equal('conflict');
      expect(await refusal(alice, 'set', privacy(xml('default')))).to.equal('conflict');
      // Declining the active list brings the default back.
      await request(alice, 'set', privacy(xml('active')));
      const again = next(bob, (s) => s.is('message') && s.getChildText('body') === 'bob again');
      await alice.send(chat('bob@localhost/b', 'bob again'));
      await again;
      const afterDecline = next(alice, withBody('bob after decline'));
      await bob.send(chat('alice@localhost/home', 'bob after decline'));
      await afterDecline;
    });

    describe('a message to the bare JID, fanned out to sessions of equal priority (§2.13, RFC 6120 §8.3)', () => {
      const noBob = list('nobob', item({ type: 'jid', value: 'bob@localhost', action: 'deny', order: '1' }, 'message'));

      /** Both of alice's sessions available at priority 0, so that a message to her bare JID goes to both. */
      beforeEach(async () => {
        alice2 = await login(t, { user: 'alice', password: 'alice-pw', resource: 'work' });
        for (const session of [alice, alice2]) await session.send(xml('presence'));
        await request(alice, 'set', privacy(noBob));
      });

      it('is not bounced when another session received it', async () => {
        await request(alice, 'set', privacy(xml('active', { name: 'nobob' })));
        const atHome = expectSilence(alice, withBody('bare to alice'), 'what the active list denies');
        // The sender would be told the message was not delivered when it was.
        const atBob = expectSilence(bob, bounceOf('VV1'), 'a bounce of a delivered message');
        const atWork = next(alice2!, withBody('bare to alice'));
        await bob.send(chat('alice@localhost', 'bare to alice', 'VV1'));
        await atWork;
        await atHome.proveWith(() => carol.send(chat('alice@localhost/home', 'carol to home')), withBody('carol to home'));
        // What the home session alone refuses does bounce.
        await atBob.proveWith(() => bob.send(chat('alice@localhost/home', 'to home', 'VV1b')), bounceOf('VV1b'));
      });

      it('is bounced once when every session refused it', async () => {
        for (const session of [alice, alice2!]) await request(session, 'set', privacy(xml('active', { name: 'nobob' })));
        const atHome = expectSilence(alice, withBody('refused by both'), 'what the active list denies');
        const atWork = expectSilence(alice2!, withBody('refused by both'), 'what the active list denies');
        await bob.send(chat('alice@localhost', 'refused by both', 'VV2'));
        const bounce = await bouncedOnce(bob, 'VV2', chat('alice@localhost', 'refused again', 'VV2b'));
        expect(errorCondition(bounce)).to.equal('service-unavailable');
        await atHome.proveWith(() => carol.send(chat('alice@localhost/home', 'carol to home')), withBody('carol to home'));
        await atWork.proveWith(() => carol.send(chat('alice@localhost/work', 'carol to work')), withBody('carol to work'));
      });

      it('is bounced once when sent to the full JID of the session that refuses it', async () => {
        await request(alice, 'set', privacy(xml('active', { name: 'nobob' })));
        // A full JID names one session: the other one is not offered what that one refused.
        const atWork = expectSilence(alice2!, withBody('to home only'), 'what another session refused');
        await bob.send(chat('alice@localhost/home', 'to home only', 'VV3'));
        const bounce = await bouncedOnce(bob, 'VV3', chat('alice@localhost/home', 'to home again', 'VV3b'));
        expect(errorCondition(bounce)).to.equal('service-unavailable');
        await atWork.proveWith(() => bob.send(chat('alice@localhost/work', 'bob to work')), withBody('bob to work'));
      });
    });

    it('refuses what the user sends to a JID their list blocks entirely with <not-acceptable/>', async () => {
      await request(alice, 'set', privacy(list('cut-bob', item({ type: 'jid', value: 'bob@localhost', action: 'deny', order: '1' }))));
      await request(alice, 'set', privacy(xml('active', { name: 'cut-bob' })));
      const atBob = expectSilence(bob, withBody('to bob'), 'a message the sender\'s list blocks');
      const refused = next(alice, (s) => s.is('message') && s.attrs.type === 'error');
      await alice.send(chat('bob@localhost/b', 'to bob', 'out1'));
      const error = await refused;
      expect(error.attrs.id).to.equal('out1');
      expect(errorCondition(error)).to.equal('not-acceptable');
      // A message-only item does not block outbound messages (it is about incoming ones).
      await atBob.proveWith(async () => {
        await request(alice, 'set', privacy(list('cut-bob', item({ type: 'jid', value: 'bob@localhost', action: 'deny', order: '1' }, 'message'))));
        await alice.send(chat('bob@localhost/b', 'to bob again'));
      }, withBody('to bob again'));
    });

    it('blocks presence by presence-in and presence-out', async () => {
      await request(alice, 'set', privacy(list('quiet', item({ type: 'jid', value: 'bob@localhost', action: 'deny', order: '1' }, 'presence-in', 'presence-out'))));
      await request(alice, 'set', privacy(xml('active', { name: 'quiet' })));
      const atAlice = expectSilence(alice, withStatus('bob here'), 'presence the list keeps out');
      const atBob = expectSilence(bob, withStatus('alice here'), 'presence the list keeps in');
      await bob.send(xml('presence', { to: 'alice@localhost/home' }, xml('status', {}, 'bob here')));
      // A message bob sends after it is let through: once it arrives, his presence was handled.
      const fromBob = next(alice, withBody('after presence'));
      await bob.send(chat('alice@localhost/home', 'after presence'));
      await fromBob;
      await atAlice.proveWith(() => carol.send(xml('presence', { to: 'alice@localhost/home' }, xml('status', {}, 'carol here'))), withStatus('carol here'));
      const refused = next(alice, (s) => s.is('presence') && s.attrs.type === 'error');
      await alice.send(xml('presence', { to: 'bob@localhost/b' }, xml('status', {}, 'alice here')));
      expect(errorCondition(await refused)).to.equal('not-acceptable');
      await atBob.proveWith(() => carol.send(xml('presence', { to: 'bob@localhost/b' }, xml('status', {}, 'carol to bob'))), withStatus('carol to bob'));
    });

    it('applies group and subscription items from the roster (mod_roster)', async () => {
      const roster = (...items: Element[]) => xml('query', { xmlns: 'jabber:iq:roster' }, ...items);
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
        const atAlice = expectSilence(alice, withBody('stranger'), "a stranger's message");
        const bounced = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
        await bob.send(chat('alice@localhost/home', 'stranger'));
        expect(errorCondition(await bounced)).to.equal('service-unavailable');
        await atAlice.proveWith(() => carol.send(chat('alice@localhost/home', 'friend')), withBody('friend'));
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
      const atBob = expectSilence(bob, withStatus('visible'), 'presence the list keeps from bob');
      const atCarol = next(carol, withStatus('visible'));
      await alice.send(xml('presence', {}, xml('status', {}, 'visible')));
      expect((await atCarol).attrs.from).to.equal('alice@localhost/home');
      await atBob.proveWith(() => carol.send(xml('presence', { to: 'bob@localhost/b' }, xml('status', {}, 'carol to bob'))), withStatus('carol to bob'));
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
      // The third resource never asked for the blocklist: no pushes for it.
      const atThree = expectSilence(alice3, (s) => s.is('iq') && s.getChild('block', BLOCKING) !== undefined, 'a blocklist push to a resource that never asked for the blocklist');
      const push = next(alice2, (s) => s.is('iq') && s.attrs.type === 'set' && s.getChild('block', BLOCKING) !== undefined);
      await request(alice, 'set', xml('block', { xmlns: BLOCKING }, xml('item', { jid: 'Bob@LocalHost' }), xml('item', { jid: 'example.com' })));
      const pushed = await push;
      expect(pushed.attrs.to).to.equal('alice@localhost/two');
      expect(pushed.getChild('block', BLOCKING)!.getChildren('item').map((i) => i.attrs.jid)).to.deep.equal(['bob@localhost', 'example.com']);
      const listed = await request(alice, 'get', xml('blocklist', { xmlns: BLOCKING }));
      expect(listed.getChild('blocklist', BLOCKING)!.getChildren('item').map((i) => i.attrs.jid)).to.deep.equal(['bob@localhost', 'example.com']);
      // Once it asks, it gets them.
      await atThree.proveWith(async () => {
        await request(alice3, 'get', xml('blocklist', { xmlns: BLOCKING }));
        await request(alice, 'set', xml('block', { xmlns: BLOCKING }, xml('item', { jid: 'probe@localhost' })));
      }, (s) => s.is('iq') && s.getChild('block', BLOCKING)?.getChild('item')?.attrs.jid === 'probe@localhost');

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
      const atAlice = expectSilence(alice, (s) => withBody('let me in')(s) || (s.is('presence') && s.attrs.from === 'bob@localhost/b'), 'a message or presence from a blocked JID');

      const bounced = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
      await bob.send(chat('alice@localhost/one', 'let me in', 'b1'));
      const error = await bounced;
      expect(error.attrs.id).to.equal('b1');
      expect(errorCondition(error)).to.equal('service-unavailable');
      await bob.send(xml('presence', { to: 'alice@localhost/one' }));
      // Refused after the presence, so once the refusal is back the presence was handled.
      expect(await refusal(bob, 'get', xml('query', { xmlns: 'jabber:iq:version' }), 'alice@localhost/one')).to.equal('service-unavailable');
      // What the server answers for her account is refused too (§3.2): no disco of alice for bob.
      expect(await refusal(bob, 'get', xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' }), 'alice@localhost')).to.equal('service-unavailable');
      // She still gets answers about her own account.
      expect((await request(alice, 'get', xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' }), 'alice@localhost')).attrs.type).to.equal('result');
      // Others still reach her.
      await atAlice.proveWith(() => eve.send(chat('alice@localhost/one', 'not blocked')), withBody('not blocked'));

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
      const unblocked = next(alice, withBody('unblocked now'));
      await bob.send(chat('alice@localhost/one', 'unblocked now'));
      await unblocked;
    });

    it('refuses a message to the bare JID of an account with several sessions once', async () => {
      // Three available sessions at equal priority: the blocklist is the account's, so one refusal in all.
      for (const session of [alice, alice2, alice3]) await session.send(xml('presence'));
      await request(alice, 'set', xml('block', { xmlns: BLOCKING }, xml('item', { jid: 'bob@localhost' })));
      await bob.send(chat('alice@localhost', 'to all of alice', 'b2'));
      const bounce = await bouncedOnce(bob, 'b2', chat('alice@localhost', 'again', 'b3'));
      expect(errorCondition(bounce)).to.equal('service-unavailable');
    });

    it('blocks a whole domain', async () => {
      await request(alice, 'set', xml('block', { xmlns: BLOCKING }, xml('item', { jid: 'example.com' })));
      const bounced = next(eve, (s) => s.is('message') && s.attrs.type === 'error');
      await eve.send(chat('alice@localhost/one', 'from another domain'));
      expect(errorCondition(await bounced)).to.equal('service-unavailable');
      const sameDomain = next(alice, withBody('same domain'));
      await bob.send(chat('alice@localhost/one', 'same domain'));
      await sameDomain;
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
