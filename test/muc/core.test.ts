/**
 * XEP-0045 core with real clients: instant and reserved room creation (201, the lock, the configuration
 * form), joining, leaving, nick changes and conflicts with their status codes, groupchat to every occupant,
 * history on join (maxstanzas, delay stamps), the subject, and private messages.
 */
import { expect } from 'chai';
import type { TestServer } from '../support/server.js';
import { collect, expectSilence, next, stopAll, xml, type Client } from '../support/xmpp.js';
import { NS_DATA, NS_MUC_OWNER, SERVICE, codes, configure, enter, errorCondition, fullJid, groupchat, instantRoom, iqError, isFrom, item, join, startMuc, user } from './helpers.js';

describe('MUC core (mod_muc, XEP-0045)', () => {
  let t: TestServer;
  let alice: Client;
  let bob: Client;
  let carol: Client;

  before(async () => {
    t = await startMuc({}, ['alice', 'bob', 'carol', 'dave']);
    alice = await user(t, 'alice');
    bob = await user(t, 'bob');
    carol = await user(t, 'carol');
  });
  after(async () => {
    await stopAll(alice, bob, carol);
    await t.stop();
  });

  it('creates an instant room: 201, locked for others until the owner submits the empty form', async () => {
    const self = await enter(alice, 'instant', 'Alice');
    expect(codes(self)).to.include.members([110, 201]);
    expect(item(self)).to.include({ affiliation: 'owner', role: 'moderator' });
    const refused = await join(bob, 'instant', 'Bob');
    expect(refused.attrs.type).to.equal('error');
    expect(errorCondition(refused)).to.equal('item-not-found');
    await alice.iqCaller.request(xml('iq', { type: 'set', to: `instant@${SERVICE}` }, xml('query', { xmlns: NS_MUC_OWNER }, xml('x', { xmlns: NS_DATA, type: 'submit' }))));
    const aliceSeen = next(bob, (s) => s.is('presence') && s.attrs.from === `instant@${SERVICE}/Alice`);
    const bobSeen = next(alice, (s) => s.is('presence') && s.attrs.from === `instant@${SERVICE}/Bob`);
    const joined = await enter(bob, 'instant', 'Bob');
    expect(item(joined)).to.include({ affiliation: 'none', role: 'participant' });
    // Semi-anonymous by default: the participant does not see the owner's JID; the moderator sees Bob's.
    expect(item(await aliceSeen)).to.include({ affiliation: 'owner', role: 'moderator' });
    expect(item(await aliceSeen).jid).to.equal(undefined);
    expect(item(await bobSeen).jid).to.equal(fullJid(bob));
  });

  it('creates a reserved room through the configuration form', async () => {
    await enter(alice, 'reserved', 'Alice');
    const form = await alice.iqCaller.request(xml('iq', { type: 'get', to: `reserved@${SERVICE}` }, xml('query', { xmlns: NS_MUC_OWNER })));
    const fields = form.getChild('query')!.getChild('x', NS_DATA)!.getChildren('field').map((f) => f.attrs.var);
    expect(fields).to.include.members(['muc#roomconfig_roomname', 'muc#roomconfig_persistentroom', 'muc#roomconfig_whois', 'muc#roomconfig_membersonly']);
    await configure(alice, 'reserved', { 'muc#roomconfig_roomname': 'The Reserved', 'muc#roomconfig_whois': 'anyone', 'unknown#field': 'ignored' });
    const self = await enter(bob, 'reserved', 'Bob');
    // Non-anonymous: 100, and every occupant sees real JIDs.
    expect(codes(self)).to.include(100);
    expect(item(self).jid).to.equal(fullJid(bob));
  });

  it('refuses a bad configuration value and changes nothing', async () => {
    await instantRoom(alice, 'strict', 'Alice');
    expect(await iqError(alice, xml('iq', { type: 'set', to: `strict@${SERVICE}` }, xml('query', { xmlns: NS_MUC_OWNER }, xml('x', { xmlns: NS_DATA, type: 'submit' }, xml('field', { var: 'muc#roomconfig_maxusers' }, xml('value', {}, 'lots')), xml('field', { var: 'muc#roomconfig_roomname' }, xml('value', {}, 'Changed'))))))).to.equal('not-acceptable');
    expect(await iqError(alice, xml('iq', { type: 'set', to: `strict@${SERVICE}` }, xml('query', { xmlns: NS_MUC_OWNER }, xml('x', { xmlns: NS_DATA, type: 'submit' }, xml('field', { var: 'captcha_protected' }, xml('value', {}, '1'))))))).to.equal('not-acceptable');
    const form = await alice.iqCaller.request(xml('iq', { type: 'get', to: `strict@${SERVICE}` }, xml('query', { xmlns: NS_MUC_OWNER })));
    const title = form.getChild('query')!.getChild('x', NS_DATA)!.getChildren('field').find((f) => f.attrs.var === 'muc#roomconfig_roomname');
    expect(title?.getChildText('value') ?? '').to.equal('');
    expect(await iqError(bob, xml('iq', { type: 'get', to: `strict@${SERVICE}` }, xml('query', { xmlns: NS_MUC_OWNER })))).to.equal('forbidden');
  });

  it('delivers groupchat to every occupant (with the echo), tells who joins, and stops at leave', async () => {
    await instantRoom(alice, 'lounge', 'Alice');
    const seenByAlice = next(alice, (s) => s.is('presence') && s.attrs.from === `lounge@${SERVICE}/Bob`);
    await enter(bob, 'lounge', 'Bob');
    expect(item(await seenByAlice)).to.include({ role: 'participant' });
    await enter(carol, 'lounge', 'Carol');
    const got = [alice, bob, carol].map((c) => next(c, (s) => s.is('message') && s.getChildText('body') === 'hi all'));
    await bob.send(groupchat('lounge', 'hi all'));
    for (const message of await Promise.all(got)) {
      expect(message.attrs.from).to.equal(`lounge@${SERVICE}/Bob`);
      expect(message.attrs.type).to.equal('groupchat');
    }
    const left = next(alice, (s) => s.is('presence') && s.attrs.from === `lounge@${SERVICE}/Carol` && s.attrs.type === 'unavailable');
    const ownLeave = next(carol, (s) => s.is('presence') && s.attrs.from === `lounge@${SERVICE}/Carol` && s.attrs.type === 'unavailable');
    await carol.send(xml('presence', { to: `lounge@${SERVICE}/Carol`, type: 'unavailable' }));
    expect(item(await left)).to.include({ role: 'none' });
    expect(codes(await ownLeave)).to.include(110);
    // The probe comes from the room to Carol too (a disco answer), handled after the groupchat under the room's lock.
    const silence = expectSilence(carol, (s) => s.is('message') && s.getChildText('body') === 'after carol left');
    await silence.proveWith(
      async () => {
        const echo = next(bob, (s) => s.getChildText('body') === 'after carol left');
        await bob.send(groupchat('lounge', 'after carol left'));
        await echo;
        await carol.send(xml('iq', { type: 'get', id: 'probe-disco', to: `lounge@${SERVICE}` }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' })));
      },
      (s) => s.is('iq') && s.attrs.id === 'probe-disco' && s.attrs.from === `lounge@${SERVICE}`,
    );
  });

  it('refuses groupchat from a non-occupant with not-acceptable', async () => {
    const error = next(carol, (s) => s.is('message') && s.attrs.type === 'error');
    await carol.send(groupchat('lounge', 'not in'));
    expect(errorCondition(await error)).to.equal('not-acceptable');
    const missing = next(carol, (s) => s.is('message') && s.attrs.type === 'error' && s.attrs.from === `nowhere@${SERVICE}`);
    await carol.send(groupchat('nowhere', 'hello?'));
    expect(errorCondition(await missing)).to.equal('item-not-found');
  });

  it('changes nicks with 303 and refuses a nick in use with 409', async () => {
    const conflict = await join(carol, 'lounge', 'Bob');
    expect(errorCondition(conflict)).to.equal('conflict');
    const oldGone = next(alice, (s) => s.is('presence') && s.attrs.from === `lounge@${SERVICE}/Bob` && s.attrs.type === 'unavailable');
    const newHere = next(alice, (s) => s.is('presence') && s.attrs.from === `lounge@${SERVICE}/Robert` && s.attrs.type === undefined);
    const selfOld = next(bob, (s) => s.is('presence') && s.attrs.from === `lounge@${SERVICE}/Bob` && s.attrs.type === 'unavailable');
    await bob.send(xml('presence', { to: `lounge@${SERVICE}/Robert` }));
    const gone = await oldGone;
    expect(codes(gone)).to.include(303);
    expect(item(gone).nick).to.equal('Robert');
    await newHere;
    expect(codes(await selfOld)).to.include.members([110, 303]);
    const status = next(alice, (s) => s.is('presence') && s.attrs.from === `lounge@${SERVICE}/Robert` && s.getChildText('status') === 'busy');
    await bob.send(xml('presence', { to: `lounge@${SERVICE}/Robert` }, xml('show', {}, 'dnd'), xml('status', {}, 'busy')));
    expect((await status).getChildText('show')).to.equal('dnd');
  });

  it('lets a second session of the same account share the nick', async () => {
    const second = await user(t, 'bob', 'second');
    try {
      const self = await enter(second, 'lounge', 'Robert');
      expect(codes(self)).to.include(110);
      const both = [bob, second].map((c) => next(c, (s) => s.is('message') && s.getChildText('body') === 'to both'));
      await alice.send(groupchat('lounge', 'to both'));
      await Promise.all(both);
    } finally {
      await stopAll(second);
    }
  });

  it('sends history on join with delay stamps, honouring maxstanzas, then the subject', async () => {
    await instantRoom(alice, 'history', 'Alice');
    const subjectSet = next(alice, (s) => s.is('message') && s.getChildText('subject') === 'Topic');
    await alice.send(xml('message', { to: `history@${SERVICE}`, type: 'groupchat' }, xml('subject', {}, 'Topic')));
    await subjectSet;
    for (const n of [1, 2, 3, 4]) {
      const echo = next(alice, (s) => s.getChildText('body') === `h${n}`);
      await alice.send(groupchat('history', `h${n}`));
      await echo;
    }
    const received = collect(carol);
    await enter(carol, 'history', 'Carol', { history: { maxstanzas: '2' } });
    const bodies = received.filter((s) => s.is('message') && s.getChildText('body')).map((s) => s.getChildText('body'));
    expect(bodies).to.deep.equal(['h3', 'h4']);
    const delayed = received.find((s) => s.getChildText('body') === 'h3')!;
    expect(delayed.getChild('delay', 'urn:xmpp:delay')?.attrs.from).to.equal(`history@${SERVICE}`);
    const subject = received.filter((s) => s.is('message') && s.getChild('subject'));
    expect(subject.at(-1)!.getChildText('subject')).to.equal('Topic');
    expect(received.indexOf(subject.at(-1)!)).to.be.greaterThan(received.indexOf(delayed));
  });

  it('honours maxchars, seconds and since in the history request', async () => {
    const dave = await user(t, 'dave');
    try {
      const count = async (history: Record<string, string>) => {
        const received = collect(dave);
        await enter(dave, 'history', 'Dave', { history });
        const left = next(dave, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === `history@${SERVICE}/Dave`);
        await dave.send(xml('presence', { to: `history@${SERVICE}/Dave`, type: 'unavailable' }));
        await left;
        return received.filter((s) => s.is('message') && s.getChildText('body')).length;
      };
      expect(await count({ maxchars: '0' })).to.equal(0);
      expect(await count({ seconds: '3600' })).to.equal(4);
      expect(await count({ since: new Date(Date.now() + 60_000).toISOString() })).to.equal(0);
      expect(await count({ since: '1970-01-01T00:00:00Z', maxstanzas: '3' })).to.equal(3);
    } finally {
      await stopAll(dave);
    }
  });

  it('tells occupants of configuration changes (104) and of logging (170)', async () => {
    const notice = next(carol, (s) => s.is('message') && s.attrs.from === `history@${SERVICE}` && codes(s).includes(104));
    await configure(alice, 'history', { 'muc#roomconfig_enablelogging': '1' });
    expect(codes(await notice)).to.include.members([104, 170]);
  });

  it('relays private messages between occupants, and refuses them when allowpm is off', async () => {
    await enter(bob, 'history', 'Bob');
    const pm = next(carol, (s) => s.is('message') && s.getChildText('body') === 'psst');
    await bob.send(xml('message', { to: `history@${SERVICE}/Carol`, type: 'chat' }, xml('body', {}, 'psst')));
    expect((await pm).attrs.from).to.equal(`history@${SERVICE}/Bob`);
    const missing = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
    await bob.send(xml('message', { to: `history@${SERVICE}/Nobody`, type: 'chat' }, xml('body', {}, 'hello?')));
    expect(errorCondition(await missing)).to.equal('item-not-found');
    await configure(alice, 'history', { 'muc#roomconfig_allowpm': 'none' });
    const refused = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
    await bob.send(xml('message', { to: `history@${SERVICE}/Carol`, type: 'chat' }, xml('body', {}, 'psst again')));
    expect(errorCondition(await refused)).to.equal('forbidden');
  });

  it('removes a temporary room when the last one leaves', async () => {
    const dave = await user(t, 'dave');
    try {
      await instantRoom(dave, 'temporary', 'Dave');
      const gone = next(dave, (s) => s.is('presence') && s.attrs.type === 'unavailable' && isFrom(`temporary@${SERVICE}/Dave`)(s));
      await dave.send(xml('presence', { to: `temporary@${SERVICE}/Dave`, type: 'unavailable' }));
      await gone;
      const error = next(dave, (s) => s.is('message') && s.attrs.type === 'error');
      await dave.send(groupchat('temporary', 'anyone?'));
      expect(errorCondition(await error)).to.equal('item-not-found');
    } finally {
      await stopAll(dave);
    }
  });
});
