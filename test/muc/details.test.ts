/**
 * The finer points of mod_muc with real clients: nicks the service enforces (§7.2.9, status 210, nicks
 * compared as RFC 7700 prepares them), the MUC/Sub system node, occupants removed because their client
 * answers with errors (status 333, ejabberd's rules on which errors), presence_broadcast across role
 * changes, the room's vCard (vcard-temp on the room's bare JID, photo hash in the room's presence), and
 * jabber:iq:register sent to a room, answered as ejabberd answers it.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { TestServer } from '../support/server.js';
import { expectSilence, next, stopAll, xml, type Client, type Element } from '../support/xmpp.js';
import { NS_MUC, NS_MUC_ADMIN, NS_MUC_OWNER, NS_MUC_USER, NS_MUCSUB, SERVICE, codes, configure, enter, errorCondition, groupchat, instantRoom, iqError, item, join, startMuc, user } from './helpers.js';

const NS_VCARD = 'vcard-temp';
const NS_PUBSUB_EVENT = 'http://jabber.org/protocol/pubsub#event';
const SYSTEM = 'urn:xmpp:mucsub:nodes:system';

/** Sends a join to room@SERVICE/<nick as written>, and resolves with the self-presence (110) or the error. */
async function joinAs(client: Client, room: string, rawNick: string): Promise<Element> {
  const got = next(client, (s) => s.is('presence') && (s.attrs.from ?? '').startsWith(`${room}@${SERVICE}/`) && (s.attrs.type === 'error' || codes(s).includes(110)));
  await client.send(xml('presence', { to: `${room}@${SERVICE}/${rawNick}` }, xml('x', { xmlns: NS_MUC })));
  return got;
}

function errorStanza(name: 'message' | 'presence', to: string, condition: string, type = 'cancel'): Element {
  return xml(name, { to, type: 'error' }, xml('error', { type }, xml(condition, { xmlns: 'urn:ietf:params:xml:ns:xmpp-stanzas' })));
}

function systemEvent(s: Element): Element | undefined {
  const items = s.getChild('event', NS_PUBSUB_EVENT)?.getChild('items');
  return items?.attrs.node === SYSTEM ? items.getChild('item')?.getChild('message') : undefined;
}

function unavailableFrom(from: string) {
  return (s: Element) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === from;
}

describe('MUC details (mod_muc)', () => {
  let t: TestServer;
  let alice: Client;
  let bob: Client;
  let carol: Client;

  before(async () => {
    t = await startMuc({ default_room_options: { allow_subscription: true } }, ['alice', 'bob', 'carol']);
    alice = await user(t, 'alice');
    bob = await user(t, 'bob');
    carol = await user(t, 'carol');
  });
  after(async () => {
    await stopAll(alice, bob, carol);
    await t.stop();
  });

  describe('nicks the service enforces (§7.2.9)', () => {
    it('says 210 when it changes the requested nick, and compares nicks in their prepared, case-folded form', async () => {
      await instantRoom(alice, 'nicks', 'Alice');
      // Spaces at the ends go and runs of spaces collapse (RFC 7700 §2.2): the service assigns "Bob B".
      const self = await joinAs(bob, 'nicks', '  Bob   B ');
      expect(self.attrs.type, String(self)).to.equal(undefined);
      expect(self.attrs.from).to.equal(`nicks@${SERVICE}/Bob B`);
      expect(codes(self)).to.include.members([110, 210]);
      // A nick that differs only in case is the same nick: taken.
      expect(errorCondition(await joinAs(carol, 'nicks', 'bob b'))).to.equal('conflict');
      // A canonical nick is kept as asked, without 210; NFKC makes the full-width letters plain ones.
      const plain = await joinAs(carol, 'nicks', 'Carol');
      expect(plain.attrs.from).to.equal(`nicks@${SERVICE}/Carol`);
      expect(codes(plain)).to.not.include(210);
      const changed = next(carol, (s) => s.is('presence') && s.attrs.from === `nicks@${SERVICE}/Caro` && s.attrs.type === undefined && codes(s).includes(110));
      await carol.send(xml('presence', { to: `nicks@${SERVICE}/Ｃａｒｏ` }));
      expect(codes(await changed)).to.include(210);
      // A nick of spaces only is no nick.
      expect(errorCondition(await joinAs(alice, 'spaces', '   '))).to.equal('jid-malformed');
    });
  });

  describe('the MUC/Sub system node', () => {
    it('sends room-level notices to its subscribers: configuration status codes and the destruction', async () => {
      await instantRoom(alice, 'sys', 'Alice');
      await bob.iqCaller.request(xml('iq', { type: 'set', to: `sys@${SERVICE}` }, xml('subscribe', { xmlns: NS_MUCSUB, nick: 'Bob' }, xml('event', { node: SYSTEM }))));
      const configured = next(bob, (s) => systemEvent(s) !== undefined);
      await configure(alice, 'sys', { 'muc#roomconfig_enablelogging': '1', 'muc#roomconfig_whois': 'anyone' });
      const notice = systemEvent(await configured)!;
      expect(notice.attrs.from).to.equal(`sys@${SERVICE}`);
      expect(codes(notice)).to.include.members([104, 170, 172]);
      const destroyed = next(bob, (s) => systemEvent(s)?.getChild('x', NS_MUC_USER)?.getChild('destroy') !== undefined);
      await alice.iqCaller.request(xml('iq', { type: 'set', to: `sys@${SERVICE}` }, xml('query', { xmlns: NS_MUC_OWNER }, xml('destroy', { jid: `elsewhere@${SERVICE}` }, xml('reason', {}, 'moving')))));
      const destroy = systemEvent(await destroyed)!.getChild('x', NS_MUC_USER)!.getChild('destroy')!;
      expect(destroy.attrs.jid).to.equal(`elsewhere@${SERVICE}`);
      expect(destroy.getChildText('reason')).to.equal('moving');
    });
  });

  describe('occupants whose client answers with errors', () => {
    it('keeps an occupant after a temporary error, and removes it with 333 when its client is gone', async () => {
      await instantRoom(alice, 'ghosts', 'Alice');
      await enter(bob, 'ghosts', 'Bob');
      await enter(carol, 'ghosts', 'Carol');
      // A bounce with a temporary condition (resource-constraint) leaves Bob in, as in ejabberd.
      const silence = expectSilence(alice, unavailableFrom(`ghosts@${SERVICE}/Bob`), "Bob's removal");
      await bob.send(errorStanza('message', `ghosts@${SERVICE}/Alice`, 'resource-constraint', 'wait'));
      await silence.proveWith(() => bob.send(groupchat('ghosts', 'still here')), (s) => s.is('message') && s.getChildText('body') === 'still here' && s.attrs.from === `ghosts@${SERVICE}/Bob`);
      // A bounce saying the recipient is not there removes Bob: the others and Bob hear 333, not 307.
      const seen = next(alice, unavailableFrom(`ghosts@${SERVICE}/Bob`));
      const told = next(bob, unavailableFrom(`ghosts@${SERVICE}/Bob`));
      await bob.send(errorStanza('message', `ghosts@${SERVICE}/Alice`, 'service-unavailable'));
      const others = await seen;
      expect(codes(others)).to.include(333).and.not.include(307);
      expect(item(others).role).to.equal('none');
      expect(codes(await told)).to.include.members([110, 333]);
      // An error presence removes whatever its condition.
      const presenceError = next(alice, unavailableFrom(`ghosts@${SERVICE}/Carol`));
      await carol.send(errorStanza('presence', `ghosts@${SERVICE}/Alice`, 'not-acceptable', 'modify'));
      expect(codes(await presenceError)).to.include(333);
      // So does any error message to the room itself.
      await enter(bob, 'ghosts', 'Bob');
      const roomError = next(alice, unavailableFrom(`ghosts@${SERVICE}/Bob`));
      await bob.send(errorStanza('message', `ghosts@${SERVICE}`, 'undefined-condition'));
      expect(codes(await roomError)).to.include(333);
    });
  });

  describe('presence_broadcast across role changes', () => {
    it('shows an occupant whose role becomes broadcast, and shows it leave when its role no longer is', async () => {
      await instantRoom(alice, 'quiet', 'Alice');
      await configure(alice, 'quiet', { 'muc#roomconfig_presencebroadcast': ['moderator', 'participant'], members_by_default: '0' });
      const silence = expectSilence(alice, (s) => s.is('presence') && s.attrs.from === `quiet@${SERVICE}/Bob`, "a hidden visitor's presence");
      const self = await enter(bob, 'quiet', 'Bob');
      expect(item(self).role, String(self)).to.equal('visitor');
      await silence.proveWith(
        () => alice.send(groupchat('quiet', 'probe')),
        (s) => s.is('message') && s.getChildText('body') === 'probe',
      );
      const role = (r: string) => xml('iq', { type: 'set', to: `quiet@${SERVICE}` }, xml('query', { xmlns: NS_MUC_ADMIN }, xml('item', { nick: 'Bob', role: r })));
      const appears = next(alice, (s) => s.is('presence') && s.attrs.from === `quiet@${SERVICE}/Bob`);
      await alice.iqCaller.request(role('participant'));
      const shown = await appears;
      expect(shown.attrs.type).to.equal(undefined);
      expect(item(shown).role).to.equal('participant');
      const goes = next(alice, (s) => s.is('presence') && s.attrs.from === `quiet@${SERVICE}/Bob`);
      const stays = next(bob, (s) => s.is('presence') && s.attrs.from === `quiet@${SERVICE}/Bob` && item(s).role === 'visitor');
      await alice.iqCaller.request(role('visitor'));
      const gone = await goes;
      expect(gone.attrs.type).to.equal('unavailable');
      expect(item(gone).role).to.equal('none');
      // Bob himself is still in, as a visitor.
      const own = await stays;
      expect(own.attrs.type).to.equal(undefined);
      expect(item(own).role).to.equal('visitor');
      // A new presence_broadcast that shows visitors shows Bob; taking them out again shows him go.
      const shownAgain = next(alice, (s) => s.is('presence') && s.attrs.from === `quiet@${SERVICE}/Bob`);
      await configure(alice, 'quiet', { 'muc#roomconfig_presencebroadcast': ['moderator', 'participant', 'visitor'] });
      const visible = await shownAgain;
      expect(visible.attrs.type).to.equal(undefined);
      expect(item(visible).role).to.equal('visitor');
      const hiddenAgain = next(alice, (s) => s.is('presence') && s.attrs.from === `quiet@${SERVICE}/Bob`);
      await configure(alice, 'quiet', { 'muc#roomconfig_presencebroadcast': ['moderator', 'participant'] });
      expect((await hiddenAgain).attrs.type).to.equal('unavailable');
    });
  });

  describe("the room's vCard", () => {
    const photo = Buffer.from('a tiny picture');
    const vcard = () => xml('vCard', { xmlns: NS_VCARD }, xml('FN', {}, 'The Carded Room'), xml('PHOTO', {}, xml('TYPE', {}, 'image/png'), xml('BINVAL', {}, photo.toString('base64'))));

    it('lets anyone read it, only owners set it, and shows its photo hash in the room presence', async () => {
      await instantRoom(alice, 'carded', 'Alice');
      const get = () => xml('iq', { type: 'get', to: `carded@${SERVICE}` }, xml('vCard', { xmlns: NS_VCARD }));
      expect(await iqError(carol, get())).to.equal('item-not-found');
      await enter(bob, 'carded', 'Bob');
      const hash = createHash('sha1').update(photo).digest('hex');
      const avatar = next(bob, (s) => s.is('presence') && s.attrs.from === `carded@${SERVICE}` && s.getChild('x', 'vcard-temp:x:update') !== undefined);
      await alice.iqCaller.request(xml('iq', { type: 'set', to: `carded@${SERVICE}` }, vcard()));
      expect((await avatar).getChild('x', 'vcard-temp:x:update')!.getChildText('photo')).to.equal(hash);
      // A non-occupant reads it; an occupant who is no owner may not set it.
      const read = await carol.iqCaller.request(get());
      expect(read.getChild('vCard', NS_VCARD)!.getChildText('FN')).to.equal('The Carded Room');
      expect(await iqError(bob, xml('iq', { type: 'set', to: `carded@${SERVICE}` }, xml('vCard', { xmlns: NS_VCARD }, xml('FN', {}, 'Mine now'))))).to.equal('forbidden');
      // A newcomer gets the room's avatar hash as it joins.
      const onJoin = next(carol, (s) => s.is('presence') && s.attrs.from === `carded@${SERVICE}` && s.getChild('x', 'vcard-temp:x:update') !== undefined);
      await enter(carol, 'carded', 'Carol');
      expect((await onJoin).getChild('x', 'vcard-temp:x:update')!.getChildText('photo')).to.equal(hash);
      // A vCard too large for the room is refused.
      const huge = xml('vCard', { xmlns: NS_VCARD }, xml('DESC', {}, 'x'.repeat(140 * 1024)));
      expect(await iqError(alice, xml('iq', { type: 'set', to: `carded@${SERVICE}` }, huge))).to.equal('not-acceptable');
      // An empty vCard removes it: the occupants see the photo go (an empty hash), and nobody reads it any more.
      const cleared = next(bob, (s) => s.is('presence') && s.attrs.from === `carded@${SERVICE}` && s.getChild('x', 'vcard-temp:x:update') !== undefined);
      await alice.iqCaller.request(xml('iq', { type: 'set', to: `carded@${SERVICE}` }, xml('vCard', { xmlns: NS_VCARD })));
      expect((await cleared).getChild('x', 'vcard-temp:x:update')!.getChildText('photo')).to.equal('');
      expect(await iqError(carol, get())).to.equal('item-not-found');
    });
  });

  describe('jabber:iq:register to a room (§7.10)', () => {
    it("answers service-unavailable, as ejabberd's rooms do, and the service still registers nicks", async () => {
      await instantRoom(alice, 'registry', 'Alice');
      for (const type of ['get', 'set'] as const) {
        const payload = type === 'get' ? xml('query', { xmlns: 'jabber:iq:register' }) : xml('query', { xmlns: 'jabber:iq:register' }, xml('username', {}, 'Bobby'));
        expect(await iqError(bob, xml('iq', { type, to: `registry@${SERVICE}` }, payload))).to.equal('service-unavailable');
      }
      const answer = next(bob, (s) => s.is('iq') && s.attrs.id === 'register-room' && s.attrs.type === 'error');
      await bob.send(xml('iq', { type: 'get', id: 'register-room', to: `registry@${SERVICE}` }, xml('query', { xmlns: 'jabber:iq:register' })));
      expect((await answer).getChild('error')!.getChildText('text', 'urn:ietf:params:xml:ns:xmpp-stanzas')).to.equal('The feature requested is not supported by the conference');
      const form = await bob.iqCaller.request(xml('iq', { type: 'get', to: SERVICE }, xml('query', { xmlns: 'jabber:iq:register' })));
      expect(form.getChild('query')).to.not.equal(undefined);
      const info = await bob.iqCaller.request(xml('iq', { type: 'get', to: `registry@${SERVICE}` }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' })));
      const features = info.getChild('query')!.getChildren('feature').map((f) => f.attrs.var);
      expect(features).to.not.include('jabber:iq:register');
      expect(features).to.include(NS_VCARD);
      await join(bob, 'registry', 'Bob');
    });
  });
});
