/**
 * Archiving with real clients (mod_mam, XEP-0313): a chat between two accounts lands in both archives, the
 * recipient's copy carries this server's XEP-0359 stanza-id (and never a client's forged one), a message
 * stored offline is archived and stamped too, what is never archived (no body, no-store hints,
 * groupchat, headline), the preferences (default always, roster and never; the always and never lists),
 * form discovery, disco, who may query, and the removal of an archive with its account.
 */
import { expect } from 'chai';
import { TestServer } from '../support/server.js';
import { collect, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import { NS_MAM, NS_SID, mamQuery, ok } from './helpers.js';

const chat = (to: string, body: string, ...extra: Element[]) => xml('message', { to, type: 'chat', id: `m-${body}` }, xml('body', {}, body), ...extra);
const received = (client: Client, body: string) => next(client, (s) => s.is('message') && s.getChildText('body') === body, 10_000);

describe('XMPP message archive (mod_mam)', function () {
  this.timeout(60_000);
  let t: TestServer;
  let alice: Client;
  let bob: Client;

  before(async () => {
    t = await TestServer.start(xmppConfig({ mod_mam: {}, mod_offline: {}, mod_disco: {}, mod_roster: {}, mod_admin_extra: {} }));
    await t.bootstrapAdmin();
    for (const user of ['alice', 'bob', 'carol', 'dave', 'erin', 'gone']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'desk' });
    bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'phone' });
    await alice.send(xml('presence'));
    await bob.send(xml('presence'));
  });
  after(async () => {
    await stopAll(alice, bob);
    await t?.stop();
  });

  it('archives a chat for both parties, and the delivered copy carries the stanza-id of the recipient archive', async () => {
    const arrived = received(bob, 'hello bob');
    await alice.send(chat('bob@localhost', 'hello bob'));
    const message = await arrived;
    const sid = message.getChildren('stanza-id', NS_SID).find((s) => s.attrs.by === 'bob@localhost');
    expect(sid, 'stanza-id by bob@localhost').to.exist;

    const bobs = await mamQuery(bob, { with: 'alice@localhost' });
    expect(bobs.bodies).to.deep.equal(['hello bob']);
    expect(bobs.ids).to.deep.equal([sid!.attrs.id]);
    const forwarded = bobs.results[0]!.getChild('forwarded', 'urn:xmpp:forward:0')!;
    expect(forwarded.getChild('delay', 'urn:xmpp:delay')!.attrs.stamp).to.match(/^\d{4}-\d\d-\d\dT/);
    expect(forwarded.getChild('message')!.attrs.from).to.equal('alice@localhost/desk');
    expect(bobs.complete).to.equal(true);
    expect(bobs.count).to.equal(1);

    const alices = await mamQuery(alice, { with: 'bob@localhost' });
    expect(alices.bodies).to.deep.equal(['hello bob']);
    expect(alices.results[0]!.getChild('forwarded')!.getChild('message')!.attrs.to).to.equal('bob@localhost');
  });

  it('removes a stanza-id a client forged in the name of the recipient archive, and keeps others', async () => {
    const arrived = received(bob, 'forged');
    await alice.send(chat('bob@localhost', 'forged', xml('stanza-id', { xmlns: NS_SID, by: 'bob@localhost', id: 'fake' }), xml('stanza-id', { xmlns: NS_SID, by: 'other@example.net', id: 'theirs' })));
    const ids = (await arrived).getChildren('stanza-id', NS_SID);
    const ours = ids.filter((s) => s.attrs.by === 'bob@localhost');
    expect(ours).to.have.length(1);
    expect(ours[0]!.attrs.id).to.not.equal('fake');
    expect(ids.some((s) => s.attrs.by === 'other@example.net' && s.attrs.id === 'theirs')).to.equal(true);
  });

  it('archives a message stored offline, and it arrives with its stanza-id', async () => {
    await alice.send(chat('carol@localhost', 'while you were out'));
    // The sender's own archive is written before routing goes on: once it is there, so is the offline copy.
    await mamQuery(alice, { with: 'carol@localhost' });
    const carol = await login(t, { user: 'carol', password: 'carol-pw', resource: 'laptop' });
    try {
      const archived = await mamQuery(carol, {});
      expect(archived.bodies).to.deep.equal(['while you were out']);
      const arrived = received(carol, 'while you were out');
      await carol.send(xml('presence'));
      const sid = (await arrived).getChildren('stanza-id', NS_SID).find((s) => s.attrs.by === 'carol@localhost');
      expect(sid?.attrs.id).to.equal(archived.ids[0]);
    } finally {
      await stopAll(carol);
    }
  });

  it('does not archive messages without a body, with no-store or no-permanent-store hints, or of type groupchat or headline', async () => {
    const before = (await mamQuery(bob, { with: 'alice@localhost' })).count!;
    await alice.send(xml('message', { to: 'bob@localhost', type: 'chat' }, xml('composing', { xmlns: 'http://jabber.org/protocol/chatstates' })));
    await alice.send(chat('bob@localhost', 'hint no-store', xml('no-store', { xmlns: 'urn:xmpp:hints' })));
    await alice.send(chat('bob@localhost', 'hint no-permanent-store', xml('no-permanent-store', { xmlns: 'urn:xmpp:hints' })));
    await alice.send(xml('message', { to: 'bob@localhost', type: 'headline' }, xml('body', {}, 'headline')));
    await alice.send(xml('message', { to: 'bob@localhost', type: 'groupchat' }, xml('body', {}, 'groupchat')));
    const last = received(bob, 'after the rest');
    await alice.send(chat('bob@localhost', 'after the rest'));
    await last;
    const after = await mamQuery(bob, { with: 'alice@localhost' });
    expect(after.count).to.equal(before + 1);
    expect(after.bodies.at(-1)).to.equal('after the rest');
    const alices = await mamQuery(alice, { with: 'bob@localhost' });
    for (const body of ['hint no-store', 'hint no-permanent-store', 'headline', 'groupchat']) expect(alices.bodies, body).to.not.include(body);
  });

  it('reads and sets the preferences; never beats always, and default never archives only the always list', async () => {
    const defaults = await bob.iqCaller.request(xml('iq', { type: 'get' }, xml('prefs', { xmlns: NS_MAM })));
    expect(defaults.getChild('prefs', NS_MAM)!.attrs.default).to.equal('always');

    const set = await bob.iqCaller.request(
      xml('iq', { type: 'set' }, xml('prefs', { xmlns: NS_MAM, default: 'never' }, xml('always', {}, xml('jid', {}, 'alice@localhost')), xml('never', {}, xml('jid', {}, 'dave@localhost')))),
    );
    const stored = set.getChild('prefs', NS_MAM)!;
    expect(stored.attrs.default).to.equal('never');
    expect(stored.getChild('always')!.getChildren('jid').map((j) => j.text())).to.deep.equal(['alice@localhost']);
    expect(stored.getChild('never')!.getChildren('jid').map((j) => j.text())).to.deep.equal(['dave@localhost']);
    const read = await bob.iqCaller.request(xml('iq', { type: 'get' }, xml('prefs', { xmlns: NS_MAM })));
    expect(read.getChild('prefs', NS_MAM)!.attrs.default).to.equal('never');

    const dave = await login(t, { user: 'dave', password: 'dave-pw', resource: 'r' });
    const erin = await login(t, { user: 'erin', password: 'erin-pw', resource: 'r' });
    try {
      for (const [client, body] of [
        [dave, 'from dave (never)'],
        [erin, 'from erin (default never)'],
        [alice, 'from alice (always)'],
      ] as const) {
        const arrived = received(bob, body);
        await client.send(chat('bob@localhost', body));
        const message = await arrived;
        const archived = message.getChildren('stanza-id', NS_SID).some((s) => s.attrs.by === 'bob@localhost');
        expect(archived, body).to.equal(body.includes('(always)'));
      }
      const all = await mamQuery(bob, { max: 50 });
      expect(all.bodies).to.include('from alice (always)');
      expect(all.bodies).to.not.include('from dave (never)');
      expect(all.bodies).to.not.include('from erin (default never)');
      // The senders' own archives follow their own preferences (the default: always).
      expect((await mamQuery(dave, {})).bodies).to.deep.equal(['from dave (never)']);

      // never also beats always when a JID is in both; a bad default is refused.
      await bob.iqCaller.request(
        xml('iq', { type: 'set' }, xml('prefs', { xmlns: NS_MAM, default: 'always' }, xml('always', {}, xml('jid', {}, 'dave@localhost')), xml('never', {}, xml('jid', {}, 'dave@localhost')))),
      );
      const arrived = received(bob, 'dave again');
      await dave.send(chat('bob@localhost', 'dave again'));
      expect((await arrived).getChildren('stanza-id', NS_SID).some((s) => s.attrs.by === 'bob@localhost')).to.equal(false);
      const refused: any = await bob.iqCaller.request(xml('iq', { type: 'set' }, xml('prefs', { xmlns: NS_MAM, default: 'sometimes' }))).catch((e) => e);
      expect(refused.condition).to.equal('bad-request');
    } finally {
      await bob.iqCaller.request(xml('iq', { type: 'set' }, xml('prefs', { xmlns: NS_MAM, default: 'always' })));
      await stopAll(dave, erin);
    }
  });

  it("default roster archives messages with contacts in the owner's roster only", async () => {
    const dave = await login(t, { user: 'dave', password: 'dave-pw', resource: 'r2' });
    const erin = await login(t, { user: 'erin', password: 'erin-pw', resource: 'r2' });
    try {
      // erin is in bob's roster (no subscription needed); dave is not.
      await bob.iqCaller.request(xml('iq', { type: 'set' }, xml('query', { xmlns: 'jabber:iq:roster' }, xml('item', { jid: 'erin@localhost' }))));
      await bob.iqCaller.request(xml('iq', { type: 'set' }, xml('prefs', { xmlns: NS_MAM, default: 'roster' })));
      for (const [client, body, archived] of [
        [erin, 'erin is a contact', true],
        [dave, 'dave is not', false],
      ] as const) {
        const arrived = received(bob, body);
        await client.send(chat('bob@localhost', body));
        expect((await arrived).getChildren('stanza-id', NS_SID).some((s) => s.attrs.by === 'bob@localhost'), body).to.equal(archived);
      }
    } finally {
      await bob.iqCaller.request(xml('iq', { type: 'set' }, xml('prefs', { xmlns: NS_MAM, default: 'always' })));
      await stopAll(dave, erin);
    }
  });

  it('answers form discovery with the filter fields', async () => {
    const answer = await alice.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: NS_MAM })));
    const fields = answer.getChild('query', NS_MAM)!.getChild('x', 'jabber:x:data')!.getChildren('field').map((f) => f.attrs.var);
    expect(fields).to.include.members(['FORM_TYPE', 'with', 'start', 'end', 'before-id', 'after-id', 'ids']);
  });

  it('announces urn:xmpp:mam:2, #extended and urn:xmpp:sid:0 on the account and the server', async () => {
    for (const to of ['alice@localhost', 'localhost']) {
      const answer = await alice.iqCaller.request(xml('iq', { type: 'get', to }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' })));
      const features = answer.getChild('query')!.getChildren('feature').map((f) => f.attrs.var);
      expect(features, to).to.include.members([NS_MAM, 'urn:xmpp:mam:2#extended', NS_SID]);
    }
  });

  it("answers a query addressed to the account's own bare JID, and refuses one of another account's archive", async () => {
    expect((await mamQuery(alice, { to: 'alice@localhost', with: 'bob@localhost' })).bodies).to.include('hello bob');
    const err: any = await mamQuery(alice, { to: 'bob@localhost' }).catch((e) => e);
    expect(err.condition).to.equal('forbidden');
  });

  it('removes the archive and the preferences with the account', async () => {
    const gone = await login(t, { user: 'gone', password: 'gone-pw', resource: 'r' });
    await gone.iqCaller.request(xml('iq', { type: 'set' }, xml('prefs', { xmlns: NS_MAM, default: 'roster' }, xml('always', {}, xml('jid', {}, 'alice@localhost')))));
    await gone.send(chat('alice@localhost', 'soon gone'));
    await mamQuery(gone, {});
    await stopAll(gone);
    const db = t.server.services.storage.db();
    expect(Number((await db('mam_messages').where({ username: 'gone' }).count({ n: '*' }))[0]!.n)).to.equal(1);
    expect(await ok(t, 'unregister', { user: 'gone', host: 'localhost' })).to.equal('User gone@localhost unregistered');
    expect(Number((await db('mam_messages').where({ username: 'gone' }).count({ n: '*' }))[0]!.n)).to.equal(0);
    expect(await db('mam_prefs').where({ username: 'gone' })).to.have.length(0);
    // The peer's archive is the peer's: it keeps the message.
    expect((await mamQuery(alice, { with: 'gone@localhost' })).bodies).to.deep.equal(['soon gone']);
  });
});
