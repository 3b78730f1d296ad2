/**
 * Offline messages (mod_offline, XEP-0160) with real clients: what an offline account is sent arrives at its
 * next initial presence, in order, stamped with XEP-0203 delays; the per-account limit; what is never
 * stored (headline, groupchat, error, chat states, <no-store/>); XEP-0079 expiry; removal with the account;
 * and the same storage on each database.
 */
import { expect } from 'chai';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { collect, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';
const NS_DELAY = 'urn:xmpp:delay';

/**
 * Resolves once the server has handled everything `client` sent before: a client's stanzas are handled in
 * order, and an IQ nobody serves is still answered (with an error).
 */
async function handled(client: Client): Promise<void> {
  const id = `barrier-${Math.random().toString(36).slice(2)}`;
  const answer = next(client, (s) => s.is('iq') && s.attrs.id === id);
  await client.send(xml('iq', { type: 'get', id, to: 'localhost' }, xml('query', { xmlns: 'urn:test:barrier' })));
  await answer;
}

function chat(to: string, body: string, ...extra: Element[]): Element {
  return xml('message', { to, type: 'chat', id: `m-${body}` }, xml('body', {}, body), ...extra);
}

const messages = (stanzas: Element[]) => stanzas.filter((s) => s.is('message') && s.attrs.type !== 'error');
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Logs in, sends initial presence, and returns the messages delivered then. With `marker`, that client first
 * sends the account one more message, stored last and so delivered last: its arrival proves that delivery
 * works (an empty result means something) and ends what is returned. Without it (a full queue has no room
 * for one), what arrived within `ms`.
 */
async function comeOnline(t: TestServer, user: string, marker?: Client, ms = 400): Promise<Element[]> {
  const last = marker ? `marker-${Math.random().toString(36).slice(2)}` : undefined;
  if (marker) {
    await marker.send(chat(`${user}@localhost`, last!));
    await handled(marker);
  }
  const client = await login(t, { user, password: `${user}-pw`, resource: 'phone' });
  try {
    const received = collect(client);
    const arrived = last ? next(client, (s) => s.is('message') && s.getChildText('body') === last, 10_000) : undefined;
    await client.send(xml('presence'));
    await (arrived ?? pause(ms));
    return messages(received).filter((m) => m.getChildText('body') !== last);
  } finally {
    await stopAll(client);
  }
}

describe('XMPP offline messages (mod_offline)', () => {
  let t: TestServer;
  let bob: Client;

  before(async () => {
    t = await TestServer.start(xmppConfig({ mod_offline: { max_user_messages: 3 } }));
    await t.bootstrapAdmin();
    for (const user of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'gina']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'desk' });
  });
  after(async () => {
    await stopAll(bob);
    await t.stop();
  });

  it('delivers what was sent while offline at the next initial presence, in order, with delay stamps', async () => {
    const before = Date.now();
    await bob.send(chat('alice@localhost', 'first'));
    // To a resource that is not online: RFC 6121 treats it as sent to the account.
    await bob.send(chat('alice@localhost/gone', 'second'));
    await bob.send(xml('message', { to: 'alice@localhost', id: 'm-third' }, xml('subject', {}, 'third')));
    await handled(bob);

    const alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'phone' });
    try {
      const received = collect(alice);
      await pause(300);
      expect(messages(received), 'nothing before the initial presence').to.have.length(0);
      await alice.send(xml('presence'));
      await pause(400);
      const got = messages(received);
      expect(got.map((m) => m.attrs.id)).to.deep.equal(['m-first', 'm-second', 'm-third']);
      for (const message of got) {
        expect(message.attrs.from).to.equal('bob@localhost/desk');
        const delay = message.getChild('delay', NS_DELAY);
        expect(delay, message.toString()).to.exist;
        expect(delay!.attrs.from).to.equal('localhost');
        expect(delay!.attrs.stamp).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
        const stamp = Date.parse(delay!.attrs.stamp!);
        expect(stamp).to.be.within(before - 1000, Date.now());
      }
      expect(got[0]!.getChildText('body')).to.equal('first');
    } finally {
      await stopAll(alice);
    }
    // Delivered means deleted: the next login gets nothing again.
    expect(await comeOnline(t, 'alice', bob)).to.have.length(0);
  });

  it('keeps the queue while the only session has a negative priority, and delivers once it turns non-negative', async () => {
    await bob.send(chat('gina@localhost', 'later'));
    await handled(bob);
    const gina = await login(t, { user: 'gina', password: 'gina-pw', resource: 'bot' });
    try {
      const received = collect(gina);
      await gina.send(xml('presence', {}, xml('priority', {}, '-1')));
      await pause(300);
      expect(messages(received)).to.have.length(0);
      await gina.send(xml('presence', {}, xml('priority', {}, '1')));
      await pause(300);
      expect(messages(received).map((m) => m.getChildText('body'))).to.deep.equal(['later']);
    } finally {
      await stopAll(gina);
    }
  });

  it('refuses messages beyond max_user_messages with <service-unavailable/>', async () => {
    const errors = collect(bob);
    for (const n of [1, 2, 3, 4]) await bob.send(chat('carol@localhost', `n${n}`));
    await handled(bob);
    const refused = errors.filter((s) => s.is('message') && s.attrs.type === 'error');
    expect(refused.map((s) => s.attrs.id)).to.deep.equal(['m-n4']);
    expect(refused[0]!.getChild('error')?.getChild('service-unavailable')).to.exist;
    expect(refused[0]!.attrs.from).to.equal('carol@localhost');
    expect((await comeOnline(t, 'carol')).map((m) => m.getChildText('body'))).to.deep.equal(['n1', 'n2', 'n3']);
  });

  it('stores neither headline, groupchat, error, chat-state-only nor <no-store/> messages', async () => {
    const replies = collect(bob);
    await bob.send(xml('message', { to: 'dave@localhost', type: 'headline', id: 'h' }, xml('body', {}, 'news')));
    await bob.send(xml('message', { to: 'dave@localhost', type: 'groupchat', id: 'g' }, xml('body', {}, 'room talk')));
    await bob.send(xml('message', { to: 'dave@localhost', type: 'error', id: 'e' }, xml('body', {}, 'an error')));
    await bob.send(xml('message', { to: 'dave@localhost', type: 'chat', id: 'cs' }, xml('composing', { xmlns: 'http://jabber.org/protocol/chatstates' })));
    await bob.send(chat('dave@localhost', 'ephemeral', xml('no-store', { xmlns: 'urn:xmpp:hints' })));
    await bob.send(chat('dave@localhost', 'kept', xml('active', { xmlns: 'http://jabber.org/protocol/chatstates' })));
    await handled(bob);
    const bounced = replies.filter((s) => s.is('message') && s.attrs.type === 'error').map((s) => s.attrs.id);
    // Groupchat to an account and a message the sender asked not to store are answered; chat states are not.
    expect(bounced).to.have.members(['g', 'm-ephemeral']);
    expect((await comeOnline(t, 'dave', bob)).map((m) => m.attrs.id)).to.deep.equal(['m-kept']);
  });

  it('never delivers a message whose XEP-0079 expire-at has passed', async () => {
    const rule = (at: Date, action = 'drop') =>
      xml('amp', { xmlns: 'http://jabber.org/protocol/amp' }, xml('rule', { condition: 'expire-at', action, value: at.toISOString().replace(/\.\d+Z$/, 'Z') }));
    const replies = collect(bob);
    await bob.send(chat('erin@localhost', 'soon-stale', rule(new Date(Date.now() + 1000))));
    await bob.send(chat('erin@localhost', 'stale', rule(new Date(Date.now() - 60_000))));
    await bob.send(chat('erin@localhost', 'stale-error', rule(new Date(Date.now() - 60_000), 'error')));
    await bob.send(chat('erin@localhost', 'fresh', rule(new Date(Date.now() + 3_600_000))));
    await handled(bob);
    const refused = replies.filter((s) => s.is('message') && s.attrs.type === 'error');
    expect(refused.map((s) => s.attrs.id)).to.deep.equal(['m-stale-error']);
    expect(refused[0]!.getChild('error')?.getChild('undefined-condition')).to.exist;
    expect(refused[0]!.getChild('error')?.getChild('failed-rules', 'http://jabber.org/protocol/amp#errors')).to.exist;
    await pause(1200);
    expect((await comeOnline(t, 'erin', bob)).map((m) => m.getChildText('body'))).to.deep.equal(['fresh']);
  });

  it('deletes the stored messages of an account that is removed', async () => {
    await bob.send(chat('frank@localhost', 'for the old frank'));
    await handled(bob);
    const removed = await t.api('unregister', { user: 'frank', host: 'localhost' }, { basic: ADMIN });
    expect(removed.status, removed.text).to.equal(200);
    await t.register('frank', 'localhost', 'frank-pw');
    expect(await comeOnline(t, 'frank', bob)).to.have.length(0);
  });

  it('advertises msgoffline in the server features', () => {
    expect(t.server.services.xmpp.disco.features('server')).to.include('msgoffline');
  });
});

describe("mod_offline with ejabberd's access_max_user_messages", () => {
  let t: TestServer;
  let bob: Client;

  before(async () => {
    // ejabberd.yml's own lines: the limit by account is a shaper rule, mod_offline names it.
    const config = xmppConfig({ mod_offline: { access_max_user_messages: 'max_user_offline_messages', max_user_messages: 5 } });
    config.acl = { ...(config.acl as object), limited: { user: 'frank@localhost' } };
    config.shaper_rules = { max_user_offline_messages: [{ 1: 'limited' }, 2] };
    t = await TestServer.start(config);
    for (const user of ['bob', 'erin', 'frank']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'desk' });
  });
  after(async () => {
    await stopAll(bob);
    await t?.stop();
  });

  it('keeps as many messages as the rule gives each account, not max_user_messages', async () => {
    const errors = collect(bob);
    for (const n of [1, 2, 3]) await bob.send(chat('erin@localhost', `e${n}`));
    for (const n of [1, 2]) await bob.send(chat('frank@localhost', `f${n}`));
    await handled(bob);
    const refused = errors.filter((s) => s.is('message') && s.attrs.type === 'error');
    expect(refused.map((s) => [s.attrs.id, s.attrs.from])).to.deep.equal([
      ['m-e3', 'erin@localhost'],
      ['m-f2', 'frank@localhost'],
    ]);
    expect(refused[0]!.getChild('error')?.getChild('service-unavailable')).to.exist;
    expect(refused[0]!.getChild('error')?.getChildText('text')).to.include('(2 messages)');
    // Full queues: no marker fits, so what arrives within the pause is all there is.
    expect((await comeOnline(t, 'erin')).map((m) => m.getChildText('body'))).to.deep.equal(['e1', 'e2']);
    expect((await comeOnline(t, 'frank')).map((m) => m.getChildText('body'))).to.deep.equal(['f1']);
  });
});

for (const database of testDatabases()) {
  describe(`mod_offline storage on ${database.name}`, () => {
    let t: TestServer;

    before(async () => {
      const settings = await database.settings('/tmp');
      const config = { ...xmppConfig({ mod_offline: {} }), ...serverSqlConfig(settings) };
      t = await TestServer.start(config);
      await t.bootstrapAdmin();
      for (const user of ['rené', 'rene', 'bob']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    it('stores, delivers in order and deletes, keeping accounts apart', async () => {
      const bob = await login(t, { user: 'bob', password: 'bob-pw' });
      try {
        for (const body of ['one', 'two', 'três ✓']) await bob.send(chat('rene@localhost', body));
        // Another account whose name differs only by an accent: a case- or accent-insensitive collation would mix them.
        await bob.send(chat('rené@localhost', 'for rené'));
        await handled(bob);
        expect((await t.api('unregister', { user: 'rené', host: 'localhost' }, { basic: ADMIN })).status).to.equal(200);
        expect((await comeOnline(t, 'rene', bob)).map((m) => m.getChildText('body'))).to.deep.equal(['one', 'two', 'três ✓']);
        expect(await comeOnline(t, 'rene', bob)).to.have.length(0);
      } finally {
        await stopAll(bob);
      }
    });
  });
}
