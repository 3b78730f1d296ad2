/**
 * Roles and affiliations with real clients (XEP-0045 §8-§10): kick (307), voice in moderated rooms,
 * ban (301) and the ban on re-entry, who may not do what, members-only (407, 321/322 removals), password
 * (401), room capacity (503), the owner lists, and destruction with a reason and an alternate venue.
 */
import { expect } from 'chai';
import type { TestServer } from '../support/server.js';
import { next, stopAll, xml, type Client } from '../support/xmpp.js';
import { NS_MUC_ADMIN, NS_MUC_OWNER, SERVICE, codes, configure, enter, errorCondition, groupchat, instantRoom, iqError, item, join, startMuc, user } from './helpers.js';

function admin(room: string, ...items: Array<Record<string, string>>) {
  return xml('iq', { type: 'set', to: `${room}@${SERVICE}` }, xml('query', { xmlns: NS_MUC_ADMIN }, ...items.map((i) => xml('item', i))));
}

describe('MUC moderation (mod_muc, XEP-0045 §8-§10)', () => {
  let t: TestServer;
  let owner: Client;
  let bob: Client;
  let carol: Client;

  before(async () => {
    t = await startMuc({ max_users: 5 }, ['owner', 'bob', 'carol', 'dave']);
    owner = await user(t, 'owner');
    bob = await user(t, 'bob');
    carol = await user(t, 'carol');
  });
  after(async () => {
    await stopAll(owner, bob, carol);
    await t.stop();
  });

  it('kicks with 307 and refuses a kick from a participant', async () => {
    await instantRoom(owner, 'kicks', 'Owner');
    await enter(bob, 'kicks', 'Bob');
    await enter(carol, 'kicks', 'Carol');
    expect(await iqError(bob, admin('kicks', { nick: 'Carol', role: 'none' }))).to.equal('forbidden');
    expect(await iqError(owner, admin('kicks', { nick: 'Ghost', role: 'none' }))).to.equal('item-not-found');
    const kicked = next(carol, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === `kicks@${SERVICE}/Carol`);
    const seen = next(bob, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === `kicks@${SERVICE}/Carol`);
    await owner.iqCaller.request(xml('iq', { type: 'set', to: `kicks@${SERVICE}` }, xml('query', { xmlns: NS_MUC_ADMIN }, xml('item', { nick: 'Carol', role: 'none' }, xml('reason', {}, 'be nice')))));
    const mine = await kicked;
    expect(codes(mine)).to.include.members([110, 307]);
    expect(mine.getChild('x', 'http://jabber.org/protocol/muc#user')!.getChild('item')!.getChildText('reason')).to.equal('be nice');
    expect(codes(await seen)).to.include(307);
    // A moderator cannot kick an owner.
    await owner.iqCaller.request(admin('kicks', { nick: 'Bob', role: 'moderator' }));
    expect(await iqError(bob, admin('kicks', { nick: 'Owner', role: 'none' }))).to.equal('not-allowed');
  });

  it('silences visitors in a moderated room until they get voice', async () => {
    await instantRoom(owner, 'quiet', 'Owner');
    await configure(owner, 'quiet', { members_by_default: '0' });
    const self = await enter(carol, 'quiet', 'Carol');
    expect(item(self).role).to.equal('visitor');
    const refused = next(carol, (s) => s.is('message') && s.attrs.type === 'error');
    await carol.send(groupchat('quiet', 'may I?'));
    expect(errorCondition(await refused)).to.equal('forbidden');
    const voiced = next(carol, (s) => s.is('presence') && s.attrs.from === `quiet@${SERVICE}/Carol` && item(s).role === 'participant');
    await owner.iqCaller.request(admin('quiet', { nick: 'Carol', role: 'participant' }));
    await voiced;
    const heard = next(owner, (s) => s.is('message') && s.getChildText('body') === 'now I can');
    await carol.send(groupchat('quiet', 'now I can'));
    await heard;
    const voiceList = await owner.iqCaller.request(xml('iq', { type: 'get', to: `quiet@${SERVICE}` }, xml('query', { xmlns: NS_MUC_ADMIN }, xml('item', { role: 'participant' }))));
    expect(voiceList.getChild('query')!.getChildren('item').map((i) => i.attrs.nick)).to.deep.equal(['Carol']);
  });

  it('bans with 301, keeps the banned out (403), and lists outcasts to admins only', async () => {
    await instantRoom(owner, 'bans', 'Owner');
    await enter(carol, 'bans', 'Carol');
    expect(await iqError(carol, admin('bans', { jid: 'bob@localhost', affiliation: 'outcast' }))).to.equal('forbidden');
    const banned = next(carol, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === `bans@${SERVICE}/Carol`);
    await owner.iqCaller.request(admin('bans', { jid: 'carol@localhost', affiliation: 'outcast' }));
    const presence = await banned;
    expect(codes(presence)).to.include(301);
    expect(item(presence).affiliation).to.equal('outcast');
    const refused = await join(carol, 'bans', 'Carol');
    expect(errorCondition(refused)).to.equal('forbidden');
    const list = await owner.iqCaller.request(xml('iq', { type: 'get', to: `bans@${SERVICE}` }, xml('query', { xmlns: NS_MUC_ADMIN }, xml('item', { affiliation: 'outcast' }))));
    expect(list.getChild('query')!.getChildren('item').map((i) => i.attrs.jid)).to.deep.equal(['carol@localhost']);
    await enter(bob, 'bans', 'Bob');
    expect(await iqError(bob, xml('iq', { type: 'get', to: `bans@${SERVICE}` }, xml('query', { xmlns: NS_MUC_ADMIN }, xml('item', { affiliation: 'outcast' }))))).to.equal('forbidden');
    // An admin may not touch the owner, nor make anyone admin.
    await owner.iqCaller.request(admin('bans', { jid: 'bob@localhost', affiliation: 'admin' }));
    expect(await iqError(bob, admin('bans', { jid: 'owner@localhost', affiliation: 'none' }))).to.equal('forbidden');
    expect(await iqError(bob, admin('bans', { jid: 'dave@localhost', affiliation: 'admin' }))).to.equal('forbidden');
    // The last owner stays.
    expect(await iqError(owner, admin('bans', { jid: 'owner@localhost', affiliation: 'member' }))).to.equal('conflict');
    await owner.iqCaller.request(admin('bans', { jid: 'carol@localhost', affiliation: 'none' }));
    await enter(carol, 'bans', 'Carol');
  });

  it('keeps non-members out of members-only rooms (407) and removes them when the room becomes members-only (322)', async () => {
    await instantRoom(owner, 'club', 'Owner');
    await enter(carol, 'club', 'Carol');
    const removed = next(carol, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === `club@${SERVICE}/Carol`);
    await configure(owner, 'club', { 'muc#roomconfig_membersonly': '1' });
    expect(codes(await removed)).to.include(322);
    expect(errorCondition(await join(carol, 'club', 'Carol'))).to.equal('registration-required');
    await owner.iqCaller.request(admin('club', { jid: 'carol@localhost', affiliation: 'member' }));
    await enter(carol, 'club', 'Carol');
    const dropped = next(carol, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === `club@${SERVICE}/Carol`);
    await owner.iqCaller.request(admin('club', { jid: 'carol@localhost', affiliation: 'none' }));
    expect(codes(await dropped)).to.include(321);
  });

  it('asks for the password (401) of a password-protected room', async () => {
    await instantRoom(owner, 'secret', 'Owner');
    await configure(owner, 'secret', { 'muc#roomconfig_passwordprotectedroom': '1', 'muc#roomconfig_roomsecret': 'sesame' });
    expect(errorCondition(await join(bob, 'secret', 'Bob'))).to.equal('not-authorized');
    expect(errorCondition(await join(bob, 'secret', 'Bob', { password: 'wrong' }))).to.equal('not-authorized');
    await enter(bob, 'secret', 'Bob', { password: 'sesame' });
  });

  it('refuses entry to a full room with service-unavailable', async () => {
    await instantRoom(owner, 'small', 'Owner');
    await configure(owner, 'small', { 'muc#roomconfig_maxusers': '2' });
    await enter(bob, 'small', 'Bob');
    expect(errorCondition(await join(carol, 'small', 'Carol'))).to.equal('service-unavailable');
  });

  it('destroys a room: occupants get the reason and the alternate venue', async () => {
    await instantRoom(owner, 'doomed', 'Owner');
    await enter(bob, 'doomed', 'Bob');
    expect(await iqError(bob, xml('iq', { type: 'set', to: `doomed@${SERVICE}` }, xml('query', { xmlns: NS_MUC_OWNER }, xml('destroy', {}))))).to.equal('forbidden');
    const told = next(bob, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === `doomed@${SERVICE}/Bob`);
    await owner.iqCaller.request(xml('iq', { type: 'set', to: `doomed@${SERVICE}` }, xml('query', { xmlns: NS_MUC_OWNER }, xml('destroy', { jid: `lounge@${SERVICE}` }, xml('reason', {}, 'moving')))));
    const destroy = (await told).getChild('x', 'http://jabber.org/protocol/muc#user')!.getChild('destroy')!;
    expect(destroy.attrs.jid).to.equal(`lounge@${SERVICE}`);
    expect(destroy.getChildText('reason')).to.equal('moving');
    const error = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
    await bob.send(groupchat('doomed', 'still here?'));
    expect(errorCondition(await error)).to.equal('item-not-found');
  });
});
