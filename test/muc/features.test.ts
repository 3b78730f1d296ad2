/**
 * The rest of mod_muc with real clients: nick registration (§7.10) and its reservation, mediated
 * invitations and declines (§7.8.2), direct invitations (XEP-0249) through MucApi, voice requests (§7.13),
 * MUC/Sub subscriptions and event delivery, service discovery of the service and its rooms, MucApi's checks
 * (options, sendGroupchat's senders), and bad input that changes nothing.
 */
import { expect } from 'chai';
import { Jid, x } from '@service/plugin-api';
import { TestServer } from '../support/server.js';
import { expectSilence, next, stopAll, xml, type Client, type Element } from '../support/xmpp.js';
import { NS_DATA, NS_MUC_USER, NS_MUCSUB, SERVICE, configure, enter, errorCondition, fullJid, groupchat, instantRoom, iqError, item, join, mucApi, mucConfig, startMuc, user } from './helpers.js';

const DISCO_INFO = 'http://jabber.org/protocol/disco#info';
const DISCO_ITEMS = 'http://jabber.org/protocol/disco#items';

function register(nick: string): Element {
  return xml('iq', { type: 'set', to: SERVICE }, xml('query', { xmlns: 'jabber:iq:register' }, xml('x', { xmlns: NS_DATA, type: 'submit' }, xml('field', { var: 'muc#register_roomnick' }, xml('value', {}, nick)))));
}

function subscribe(room: string, nick: string, nodes: string[], extra: Record<string, string> = {}): Element {
  return xml('iq', { type: 'set', to: `${room}@${SERVICE}` }, xml('subscribe', { xmlns: NS_MUCSUB, nick, ...extra }, ...nodes.map((node) => xml('event', { node }))));
}

describe('MUC features (mod_muc)', () => {
  let t: TestServer;
  let alice: Client;
  let bob: Client;
  let carol: Client;

  before(async () => {
    t = await startMuc({ default_room_options: { allow_subscription: true } }, ['alice', 'bob', 'carol', 'dave'], {}, true);
    alice = await user(t, 'alice');
    bob = await user(t, 'bob');
    carol = await user(t, 'carol');
  });
  after(async () => {
    await stopAll(alice, bob, carol);
    await t.stop();
  });

  it('registers a nick on the service and reserves it for its account', async () => {
    await bob.iqCaller.request(register('Bobby'));
    const form = await bob.iqCaller.request(xml('iq', { type: 'get', to: SERVICE }, xml('query', { xmlns: 'jabber:iq:register' })));
    expect(form.getChild('query')!.getChild('registered')).to.not.equal(undefined);
    expect(await iqError(carol, register('Bobby'))).to.equal('conflict');
    // Reserved in every case and width, as nicks are compared (RFC 7700).
    expect(await iqError(carol, register('BOBBY'))).to.equal('conflict');
    await instantRoom(alice, 'nicks', 'Alice');
    expect(errorCondition(await join(carol, 'nicks', 'Bobby'))).to.equal('conflict');
    expect(errorCondition(await join(carol, 'nicks', 'bobby'))).to.equal('conflict');
    expect(errorCondition(await join(carol, 'nicks', 'Ｂｏｂｂｙ'))).to.equal('conflict');
    const reserved = await bob.iqCaller.request(xml('iq', { type: 'get', to: `nicks@${SERVICE}` }, xml('query', { xmlns: DISCO_INFO, node: 'x-roomuser-item' })));
    expect(reserved.getChild('query')!.getChild('identity')!.attrs.name).to.equal('Bobby');
    await enter(bob, 'nicks', 'Bobby');
    await mucApi().unregisterNick(SERVICE, 'bob@localhost');
    let error: { kind?: string } | undefined;
    await mucApi().unregisterNick(SERVICE, 'bob@localhost').catch((e: { kind?: string }) => (error = e));
    expect(error?.kind).to.equal('not_found');
    await mucApi().registerNick(SERVICE, 'carol@localhost', 'Caro');
    expect(await iqError(bob, register('Caro'))).to.equal('conflict');
  });

  it('relays mediated invitations, adds the invitee as member of a members-only room, and relays the decline', async () => {
    await instantRoom(alice, 'party', 'Alice');
    await configure(alice, 'party', { 'muc#roomconfig_membersonly': '1' });
    const invited = next(carol, (s) => s.is('message') && s.attrs.from === `party@${SERVICE}` && s.getChild('x', NS_MUC_USER)?.getChild('invite') !== undefined);
    await alice.send(xml('message', { to: `party@${SERVICE}` }, xml('x', { xmlns: NS_MUC_USER }, xml('invite', { to: 'carol@localhost' }, xml('reason', {}, 'join us')))));
    const invite = (await invited).getChild('x', NS_MUC_USER)!.getChild('invite')!;
    expect(invite.attrs.from).to.equal(fullJid(alice));
    expect(invite.getChildText('reason')).to.equal('join us');
    expect(await mucApi().affiliation('party', SERVICE, 'carol@localhost')).to.equal('member');
    const declined = next(alice, (s) => s.is('message') && s.getChild('x', NS_MUC_USER)?.getChild('decline') !== undefined);
    await carol.send(xml('message', { to: `party@${SERVICE}` }, xml('x', { xmlns: NS_MUC_USER }, xml('decline', { to: fullJid(alice) }, xml('reason', {}, 'busy')))));
    expect((await declined).getChild('x', NS_MUC_USER)!.getChild('decline')!.attrs.from).to.equal('carol@localhost');
    // A participant may not invite when the room does not allow it.
    await enter(carol, 'party', 'Carol');
    const refused = next(carol, (s) => s.is('message') && s.attrs.type === 'error');
    await carol.send(xml('message', { to: `party@${SERVICE}` }, xml('x', { xmlns: NS_MUC_USER }, xml('invite', { to: 'dave@localhost' }))));
    expect(errorCondition(await refused)).to.equal('not-allowed');
  });

  it('sends direct invitations (XEP-0249) from the room through MucApi', async () => {
    const direct = next(bob, (s) => s.is('message') && s.getChild('x', 'jabber:x:conference') !== undefined);
    await mucApi().inviteDirect('party', SERVICE, [Jid.parse('bob@localhost')], { reason: 'come', password: '' });
    const conference = (await direct).getChild('x', 'jabber:x:conference')!;
    expect(conference.attrs).to.include({ jid: `party@${SERVICE}`, reason: 'come' });
  });

  it('relays a voice request to the moderators, and grants voice on approval', async () => {
    await instantRoom(alice, 'stage', 'Alice');
    await configure(alice, 'stage', { members_by_default: '0' });
    await enter(carol, 'stage', 'Carol');
    const request = next(alice, (s) => s.is('message') && s.attrs.from === `stage@${SERVICE}` && s.getChild('x', NS_DATA) !== undefined);
    const form = (fields: Record<string, string>) => xml('x', { xmlns: NS_DATA, type: 'submit' }, xml('field', { var: 'FORM_TYPE' }, xml('value', {}, 'http://jabber.org/protocol/muc#request')), ...Object.entries(fields).map(([k, v]) => xml('field', { var: k }, xml('value', {}, v))));
    await carol.send(xml('message', { to: `stage@${SERVICE}` }, form({ 'muc#role': 'participant' })));
    const fields = (await request).getChild('x', NS_DATA)!.getChildren('field');
    expect(fields.find((f) => f.attrs.var === 'muc#roomnick')!.getChildText('value')).to.equal('Carol');
    const again = next(carol, (s) => s.is('message') && s.attrs.type === 'error');
    await carol.send(xml('message', { to: `stage@${SERVICE}` }, form({ 'muc#role': 'participant' })));
    expect(errorCondition(await again)).to.equal('resource-constraint');
    const voiced = next(carol, (s) => s.is('presence') && s.attrs.from === `stage@${SERVICE}/Carol` && item(s).role === 'participant');
    await alice.send(xml('message', { to: `stage@${SERVICE}` }, form({ 'muc#role': 'participant', 'muc#roomnick': 'Carol', 'muc#request_allow': 'true' })));
    await voiced;
  });

  it('subscribes with MUC/Sub and delivers events to a subscriber that is not joined', async () => {
    await instantRoom(alice, 'feed', 'Alice');
    const answer = await bob.iqCaller.request(subscribe('feed', 'Bob', ['urn:xmpp:mucsub:nodes:messages', 'urn:xmpp:mucsub:nodes:presence', 'urn:xmpp:unknown']));
    expect(answer.getChild('subscribe', NS_MUCSUB)!.getChildren('event').map((e) => e.attrs.node)).to.deep.equal(['urn:xmpp:mucsub:nodes:messages', 'urn:xmpp:mucsub:nodes:presence']);
    const event = next(bob, (s) => s.is('message') && s.getChild('event', 'http://jabber.org/protocol/pubsub#event') !== undefined && s.getChild('event')!.getChild('items')!.attrs.node === 'urn:xmpp:mucsub:nodes:messages');
    await alice.send(groupchat('feed', 'news'));
    const wrapped = (await event).getChild('event')!.getChild('items')!.getChild('item')!.getChild('message')!;
    expect(wrapped.attrs.from).to.equal(`feed@${SERVICE}/Alice`);
    expect(wrapped.getChildText('body')).to.equal('news');
    const list = await alice.iqCaller.request(xml('iq', { type: 'get', to: `feed@${SERVICE}` }, xml('subscriptions', { xmlns: NS_MUCSUB })));
    expect(list.getChild('subscriptions')!.getChildren('subscription').map((s) => s.attrs.jid)).to.deep.equal(['bob@localhost']);
    expect(await iqError(carol, xml('iq', { type: 'get', to: `feed@${SERVICE}` }, xml('subscriptions', { xmlns: NS_MUCSUB })))).to.equal('forbidden');
    expect((await mucApi().subscribers('feed', SERVICE)).map((s) => s.nick)).to.deep.equal(['Bob']);
    // A subscriber may post through MucApi.sendGroupchat; a stranger may not.
    const posted = next(alice, (s) => s.is('message') && s.getChildText('body') === 'from the api');
    await mucApi().sendGroupchat('feed', SERVICE, Jid.parse('bob@localhost'), x('message', { type: 'groupchat' }, x('body', {}, 'from the api')));
    expect((await posted).attrs.from).to.equal(`feed@${SERVICE}/Bob`);
    let refused: { kind?: string } | undefined;
    await mucApi().sendGroupchat('feed', SERVICE, Jid.parse('carol@localhost'), x('message', { type: 'groupchat' }, x('body', {}, 'nope'))).catch((e: { kind?: string }) => (refused = e));
    expect(refused?.kind).to.equal('not_allowed');
    // After unsubscribing, nothing more arrives.
    await bob.iqCaller.request(xml('iq', { type: 'set', to: `feed@${SERVICE}` }, xml('unsubscribe', { xmlns: NS_MUCSUB })));
    const silence = expectSilence(bob, (s) => s.getChild('event', 'http://jabber.org/protocol/pubsub#event') !== undefined);
    await silence.proveWith(
      async () => {
        // The probe takes the same way (a message from the room to Bob's account), after the groupchat.
        const echo = next(alice, (s) => s.getChildText('body') === 'more news');
        await alice.send(groupchat('feed', 'more news'));
        await echo;
        await mucApi().inviteDirect('feed', SERVICE, [Jid.parse('bob@localhost')], { reason: 'probe' });
      },
      (s) => s.getChild('x', 'jabber:x:conference')?.attrs.reason === 'probe',
    );
  });

  it('refuses subscriptions where the room does not allow them', async () => {
    await instantRoom(alice, 'nosub', 'Alice');
    await configure(alice, 'nosub', { 'muc#roomconfig_allow_subscription': '0' });
    expect(await iqError(bob, subscribe('nosub', 'Bob', ['urn:xmpp:mucsub:nodes:messages']))).to.equal('not-allowed');
    expect(await iqError(bob, subscribe('feed', 'Alice', ['urn:xmpp:mucsub:nodes:messages']))).to.equal('conflict');
  });

  it('lets a moderator subscribe someone else, and counts subscribers as members of a members-only room', async () => {
    await instantRoom(alice, 'inner', 'Alice');
    await configure(alice, 'inner', { 'muc#roomconfig_membersonly': '1' });
    expect(await iqError(bob, subscribe('inner', 'Bob', ['urn:xmpp:mucsub:nodes:messages']))).to.equal('registration-required');
    expect(await iqError(bob, subscribe('inner', 'Carol', ['urn:xmpp:mucsub:nodes:messages'], { jid: 'carol@localhost' }))).to.equal('forbidden');
    await alice.iqCaller.request(subscribe('inner', 'Carol', ['urn:xmpp:mucsub:nodes:messages', 'urn:xmpp:mucsub:nodes:subject'], { jid: 'carol@localhost' }));
    const subject = next(carol, (s) => s.getChild('event', 'http://jabber.org/protocol/pubsub#event')?.getChild('items')?.attrs.node === 'urn:xmpp:mucsub:nodes:subject');
    await alice.send(xml('message', { to: `inner@${SERVICE}`, type: 'groupchat' }, xml('subject', {}, 'Inner circle')));
    expect((await subject).getChild('event')!.getChild('items')!.getChild('item')!.getChild('message')!.getChildText('subject')).to.equal('Inner circle');
    await enter(carol, 'inner', 'Carol');
    expect(errorCondition(await join(bob, 'inner', 'Bob'))).to.equal('registration-required');
  });

  it('answers disco on the service and on rooms', async () => {
    const server = await bob.iqCaller.request(xml('iq', { type: 'get', to: 'localhost' }, xml('query', { xmlns: DISCO_ITEMS })));
    expect(server.getChild('query')!.getChildren('item').map((i) => i.attrs.jid)).to.include(SERVICE);
    const info = await bob.iqCaller.request(xml('iq', { type: 'get', to: SERVICE }, xml('query', { xmlns: DISCO_INFO })));
    const query = info.getChild('query')!;
    expect(query.getChild('identity')!.attrs).to.include({ category: 'conference', type: 'text' });
    expect(query.getChildren('feature').map((f) => f.attrs.var)).to.include.members(['http://jabber.org/protocol/muc', 'jabber:iq:register', NS_MUCSUB]);
    await configure(alice, 'feed', { 'muc#roomconfig_roomname': 'The Feed', 'muc#roomconfig_roomdesc': 'news', 'muc#roomconfig_publicroom': '1' });
    const items = await bob.iqCaller.request(xml('iq', { type: 'get', to: SERVICE }, xml('query', { xmlns: DISCO_ITEMS })));
    expect(items.getChild('query')!.getChildren('item').map((i) => i.attrs.jid)).to.include(`feed@${SERVICE}`);
    await configure(alice, 'nosub', { 'muc#roomconfig_publicroom': '0' });
    const again = await bob.iqCaller.request(xml('iq', { type: 'get', to: SERVICE }, xml('query', { xmlns: DISCO_ITEMS })));
    expect(again.getChild('query')!.getChildren('item').map((i) => i.attrs.jid)).to.not.include(`nosub@${SERVICE}`);
    const room = (await bob.iqCaller.request(xml('iq', { type: 'get', to: `feed@${SERVICE}` }, xml('query', { xmlns: DISCO_INFO })))).getChild('query')!;
    expect(room.getChild('identity')!.attrs.name).to.equal('The Feed');
    expect(room.getChildren('feature').map((f) => f.attrs.var)).to.include.members(['muc_public', 'muc_temporary', 'muc_open', 'muc_moderated', 'muc_semianonymous', 'muc_unsecured', NS_MUCSUB]);
    const roominfo = room.getChild('x', NS_DATA)!.getChildren('field');
    expect(roominfo.find((f) => f.attrs.var === 'muc#roominfo_description')!.getChildText('value')).to.equal('news');
    expect(roominfo.find((f) => f.attrs.var === 'muc#roominfo_occupants')!.getChildText('value')).to.equal('1');
    const occupants = await bob.iqCaller.request(xml('iq', { type: 'get', to: `feed@${SERVICE}` }, xml('query', { xmlns: DISCO_ITEMS })));
    expect(occupants.getChild('query')!.getChildren('item').map((i) => i.attrs.jid)).to.deep.equal([`feed@${SERVICE}/Alice`]);
    expect(await iqError(bob, xml('iq', { type: 'get', to: `missing@${SERVICE}` }, xml('query', { xmlns: DISCO_INFO })))).to.equal('item-not-found');
  });

  it('checks MucApi arguments: unknown options, bad values, existing rooms, missing rooms', async () => {
    const api = mucApi();
    expect(api.services()).to.deep.equal([SERVICE, 'conference.example.com']);
    await api.createRoom('made', SERVICE, { options: { title: 'Made', persistent: true }, affiliations: [{ jid: 'alice@localhost', affiliation: 'owner' }] });
    const kinds: string[] = [];
    const fail = (p: Promise<unknown>) => p.then(() => kinds.push('ok'), (e: { kind: string; message: string }) => kinds.push(`${e.kind}: ${e.message}`));
    await fail(api.createRoom('made', SERVICE));
    await fail(api.setOption('made', SERVICE, 'no_such_option', 'true'));
    await fail(api.setOption('made', SERVICE, 'members_only', 'maybe'));
    await fail(api.setOption('ghost', SERVICE, 'members_only', 'true'));
    await fail(api.createRoom('other', SERVICE, { options: { max_users: -3 } }));
    expect(kinds[0]).to.match(/^conflict/);
    expect(kinds[1]).to.match(/^bad_argument: .*no_such_option/);
    expect(kinds[2]).to.match(/^bad_argument: .*members_only.*maybe/);
    expect(kinds[3]).to.match(/^not_found/);
    expect(kinds[4]).to.match(/^bad_argument: .*max_users/);
    await api.setOption('made', SERVICE, 'presence_broadcast', 'moderator, participant');
    const options = await api.options('made', SERVICE);
    expect(options).to.include({ title: 'Made', persistent: true, members_only: false });
    expect(options.presence_broadcast).to.deep.equal(['moderator', 'participant']);
    const summary = await api.room('made', SERVICE);
    expect(summary).to.include({ jid: `made@${SERVICE}`, persistent: true, occupants: 0 });
    await enter(alice, 'made', 'Alice');
    expect((await api.occupants('made', SERVICE)).map((o) => [o.nick, o.role, o.affiliation])).to.deep.equal([['Alice', 'moderator', 'owner']]);
    const echo = next(alice, (s) => s.getChildText('body') === 'kept');
    await alice.send(groupchat('made', 'kept'));
    await echo;
    const history = await api.history('made', SERVICE);
    expect(history.map((h) => h.message.getChildText('body'))).to.deep.equal(['kept']);
    expect(await api.userRooms('alice@localhost')).to.include(`made@${SERVICE}`);
    const destroyed = next(alice, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === `made@${SERVICE}/Alice`);
    await api.destroyRoom('made', SERVICE, { reason: 'done' });
    expect((await destroyed).getChild('x', NS_MUC_USER)!.getChild('destroy')!.getChildText('reason')).to.equal('done');
    expect(await api.room('made', SERVICE)).to.equal(undefined);
  });

  it('relays IQs between occupants under their occupant JIDs, unless allow_query_users is off', async () => {
    await instantRoom(alice, 'relay', 'Alice');
    await enter(carol, 'relay', 'Carol');
    let askedBy: string | undefined;
    carol.iqCallee.get('urn:example:relay', 'query', (ctx: { stanza: Element }) => {
      askedBy = ctx.stanza.attrs.from;
      return xml('query', { xmlns: 'urn:example:relay' }, xml('answer', {}, 'from carol'));
    });
    const answer = await alice.iqCaller.request(xml('iq', { type: 'get', to: `relay@${SERVICE}/Carol` }, xml('query', { xmlns: 'urn:example:relay' })));
    expect(answer.getChild('query')!.getChildText('answer')).to.equal('from carol');
    expect(answer.attrs).to.include({ type: 'result', from: `relay@${SERVICE}/Carol` });
    expect(askedBy).to.equal(`relay@${SERVICE}/Alice`);
    expect(await iqError(alice, xml('iq', { type: 'get', to: `relay@${SERVICE}/Nobody` }, xml('ping', { xmlns: 'urn:xmpp:ping' })))).to.equal('item-not-found');
    await configure(alice, 'relay', { allow_query_users: '0' });
    expect(await iqError(carol, xml('iq', { type: 'get', to: `relay@${SERVICE}/Alice` }, xml('ping', { xmlns: 'urn:xmpp:ping' })))).to.equal('not-allowed');
  });

  it('answers bad input with clear errors, changes nothing, and keeps serving', async () => {
    const malformed = next(bob, (s) => s.is('presence') && s.attrs.type === 'error' && s.attrs.from === `feed@${SERVICE}`);
    await bob.send(xml('presence', { to: `feed@${SERVICE}` }));
    expect(errorCondition(await malformed)).to.equal('jid-malformed');
    // A nick with a character stringprep prohibits (U+200E, a display property) is no occupant JID.
    const badNick = next(bob, (s) => s.is('presence') && s.attrs.type === 'error' && s.attrs.from?.startsWith(`feed@${SERVICE}/a`) === true);
    await bob.send(xml('presence', { to: `feed@${SERVICE}/a\u200Eb` }, xml('x', { xmlns: 'http://jabber.org/protocol/muc' })));
    expect(errorCondition(await badNick)).to.equal('jid-malformed');
    expect((await mucApi().occupants('feed', SERVICE)).map((o) => o.nick)).to.deep.equal(['Alice']);
    expect(await iqError(alice, xml('iq', { type: 'set', to: `feed@${SERVICE}` }, xml('query', { xmlns: 'http://jabber.org/protocol/muc#admin' }, xml('item', { nick: 'Alice', role: 'emperor' }))))).to.equal('bad-request');
    expect(await iqError(alice, xml('iq', { type: 'set', to: `feed@${SERVICE}` }, xml('query', { xmlns: 'http://jabber.org/protocol/muc#admin' }, xml('item', { jid: 'not a jid@@', affiliation: 'member' }))))).to.equal('jid-malformed');
    expect(await iqError(alice, xml('iq', { type: 'get', to: `feed@${SERVICE}` }, xml('query', { xmlns: 'urn:example:nothing' })))).to.equal('service-unavailable');
    expect(await iqError(bob, xml('iq', { type: 'set', to: SERVICE }, xml('query', { xmlns: 'jabber:iq:register' }, xml('x', { xmlns: NS_DATA, type: 'submit' }))))).to.equal('not-acceptable');
    const normal = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
    await bob.send(xml('message', { to: `feed@${SERVICE}` }, xml('body', {}, 'not groupchat')));
    expect(errorCondition(await normal)).to.equal('bad-request');
    expect(await mucApi().affiliation('feed', SERVICE, 'alice@localhost')).to.equal('owner');
    // Still serving.
    const still = next(alice, (s) => s.getChildText('body') === 'still here');
    await alice.send(groupchat('feed', 'still here'));
    await still;
  });
});

describe('MUC occupants and accounts that go away (mod_muc, without mod_presence)', () => {
  let t: TestServer;

  before(async () => {
    t = await TestServer.start({ ...mucConfig(), modules: { mod_http_api: {}, mod_muc: {} } });
    await t.bootstrapAdmin();
    for (const name of ['alice', 'bob', 'carol']) await t.server.services.accounts.register(name, 'localhost', `${name}-pw`);
  });
  after(async () => {
    await t.stop();
  });

  it('removes the occupant of a session that ended without leaving', async () => {
    const alice = await user(t, 'alice');
    const bob = await user(t, 'bob');
    try {
      await instantRoom(alice, 'abrupt', 'Alice');
      await enter(bob, 'abrupt', 'Bob');
      const left = next(alice, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === `abrupt@${SERVICE}/Bob`);
      await bob.stop();
      expect(item(await left).role).to.equal('none');
    } finally {
      await stopAll(alice, bob);
    }
  });

  it('forgets the registered nick of a removed account', async () => {
    const bob = await user(t, 'bob');
    await bob.iqCaller.request(register('Bobby'));
    await stopAll(bob);
    await t.server.services.accounts.unregister('bob', 'localhost');
    const carol = await user(t, 'carol');
    try {
      await carol.iqCaller.request(register('Bobby'));
    } finally {
      await stopAll(carol);
    }
  });
});
