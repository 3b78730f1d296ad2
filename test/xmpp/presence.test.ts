/**
 * Presence with real clients (RFC 6121 §4): broadcast to subscribers and own resources, probes at login
 * (answered with the contacts' presence, or unavailable), probes from strangers ignored, directed
 * presence, and unavailable presence when a session ends — also when its connection is simply lost.
 */
import { expect } from 'chai';
import type { TLSSocket } from 'node:tls';
import { TestServer } from '../support/server.js';
import { expectSilence, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

const NS_ROSTER = 'jabber:iq:roster';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function isPresence(stanza: Element, from: string, type?: string): boolean {
  return stanza.is('presence') && stanza.attrs.from === from && stanza.attrs.type === type;
}

function nextPresence(c: Client, from: string, type?: string): Promise<Element> {
  return next(c, (s) => isPresence(s, from, type));
}

async function requestRoster(c: Client): Promise<void> {
  await c.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: NS_ROSTER })));
}

/** The full subscription handshake both ways, between two fresh sessions. */
async function befriend(t: TestServer, a: string, b: string): Promise<void> {
  const one = await login(t, { user: a, password: `${a}-pw`, resource: 'setup' });
  const two = await login(t, { user: b, password: `${b}-pw`, resource: 'setup' });
  try {
    for (const c of [one, two]) {
      await requestRoster(c);
      await c.send(xml('presence'));
    }
    await pause(50);
    for (const [asker, approver, askerJid, approverJid] of [[one, two, `${a}@localhost`, `${b}@localhost`], [two, one, `${b}@localhost`, `${a}@localhost`]] as const) {
      const request = next(approver, (s) => s.is('presence') && s.attrs.type === 'subscribe');
      await asker.send(xml('presence', { type: 'subscribe', to: approverJid }));
      await request;
      const approved = next(asker, (s) => s.is('presence') && s.attrs.type === 'subscribed');
      await approver.send(xml('presence', { type: 'subscribed', to: askerJid }));
      await approved;
    }
  } finally {
    await stopAll(one, two);
  }
}

describe('XMPP presence', () => {
  let t: TestServer;
  const clients: Client[] = [];
  const connect = async (user: string, resource: string, presence?: Element) => {
    const c = await login(t, { user, password: `${user}-pw`, resource });
    clients.push(c);
    if (presence) await c.send(presence);
    return c;
  };

  before(async () => {
    t = await TestServer.start(xmppConfig({ mod_roster: {}, mod_presence: {} }));
    for (const user of ['alice', 'bob', 'carol']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    // alice and bob are subscribed to each other; carol is a stranger to both.
    await befriend(t, 'alice', 'bob');
    await pause(100);
  });
  afterEach(async () => {
    await stopAll(...clients.splice(0));
    // Let the server finish the sessions (their unavailable presence) before the next test.
    await pause(100);
  });
  after(() => t.stop());

  it('broadcasts initial presence to subscribers and own resources, and probes the contacts', async () => {
    const bob = await connect('bob', 'b1', xml('presence', {}, xml('status', {}, 'bob here')));
    const alice = await connect('alice', 'a1');
    const atBob = nextPresence(bob, 'alice@localhost/a1');
    const ownCopy = nextPresence(alice, 'alice@localhost/a1');
    const probed = nextPresence(alice, 'bob@localhost/b1');
    await alice.send(xml('presence', {}, xml('status', {}, 'hello')));
    expect((await atBob).getChildText('status')).to.equal('hello');
    await ownCopy;
    expect((await probed).getChildText('status')).to.equal('bob here');
  });

  it('gives a contact that logs in later the presence of the available resources (probe)', async () => {
    await connect('alice', 'a1', xml('presence', {}, xml('show', {}, 'away'), xml('status', {}, 'at lunch')));
    const bob = await connect('bob', 'b1');
    const probed = nextPresence(bob, 'alice@localhost/a1');
    await bob.send(xml('presence'));
    const presence = await probed;
    expect(presence.getChildText('show')).to.equal('away');
    expect(presence.getChildText('status')).to.equal('at lunch');
    expect(presence.attrs.to).to.equal('bob@localhost/b1');

    // Another resource of alice hears of the first one as it comes online.
    const second = await connect('alice', 'a2');
    const sibling = nextPresence(second, 'alice@localhost/a1');
    await second.send(xml('presence'));
    expect((await sibling).getChildText('status')).to.equal('at lunch');
  });

  it('answers the probe of a contact with no available resource with unavailable', async () => {
    const bob = await connect('bob', 'b1');
    const offline = nextPresence(bob, 'alice@localhost', 'unavailable');
    await bob.send(xml('presence'));
    await offline;
  });

  it('ignores probes from non-subscribers and never shows probes to clients', async () => {
    const alice = await connect('alice', 'a1', xml('presence'));
    const atAlice = expectSilence(alice, (s) => s.is('presence') && s.attrs.type === 'probe', 'a probe shown to the client');
    const carol = await connect('carol', 'c1', xml('presence'));
    const atCarol = expectSilence(carol, (s) => s.is('presence') && s.attrs.from?.startsWith('alice@') === true, "alice's presence, for a stranger's probe");
    await carol.send(xml('presence', { type: 'probe', to: 'alice@localhost' }));
    // Presence each directs to the other afterwards does arrive.
    await atAlice.proveWith(() => carol.send(xml('presence', { to: 'alice@localhost/a1' }, xml('status', {}, 'carol here'))), (s) => isPresence(s, 'carol@localhost/c1') && s.getChildText('status') === 'carol here');
    await atCarol.proveWith(() => alice.send(xml('presence', { to: 'carol@localhost/c1' }, xml('status', {}, 'alice here'))), (s) => isPresence(s, 'alice@localhost/a1') && s.getChildText('status') === 'alice here');
  });

  it('sends updates and unavailable presence to subscribers only', async () => {
    const bob = await connect('bob', 'b1', xml('presence'));
    const carol = await connect('carol', 'c1', xml('presence'));
    const atCarol = expectSilence(carol, (s) => s.is('presence') && s.attrs.from?.startsWith('alice@') === true, "alice's broadcast presence at a non-subscriber");
    const alice = await connect('alice', 'a1', xml('presence'));
    await nextPresence(bob, 'alice@localhost/a1');

    const update = next(bob, (s) => isPresence(s, 'alice@localhost/a1') && s.getChildText('show') === 'xa');
    await alice.send(xml('presence', {}, xml('show', {}, 'xa')));
    await update;
    const gone = nextPresence(bob, 'alice@localhost/a1', 'unavailable');
    await alice.send(xml('presence', { type: 'unavailable' }, xml('status', {}, 'gone fishing')));
    expect((await gone).getChildText('status')).to.equal('gone fishing');
    // Presence alice directs to carol afterwards does arrive.
    await atCarol.proveWith(() => alice.send(xml('presence', { to: 'carol@localhost/c1' }, xml('status', {}, 'directed'))), (s) => isPresence(s, 'alice@localhost/a1') && s.getChildText('status') === 'directed');
  });

  it('withdraws directed presence and broadcasts unavailable when the connection is lost', async () => {
    const bob = await connect('bob', 'b1', xml('presence'));
    const carol = await connect('carol', 'c1', xml('presence'));
    const alice = await connect('alice', 'a1', xml('presence', {}, xml('status', {}, 'last words')));
    await nextPresence(bob, 'alice@localhost/a1');

    const directed = nextPresence(carol, 'alice@localhost/a1');
    await alice.send(xml('presence', { to: 'carol@localhost/c1' }, xml('status', {}, 'just for carol')));
    expect((await directed).getChildText('status')).to.equal('just for carol');

    const atBob = nextPresence(bob, 'alice@localhost/a1', 'unavailable');
    const atCarol = nextPresence(carol, 'alice@localhost/a1', 'unavailable');
    // The socket goes away without a closing stream tag.
    ((alice as unknown as { socket: { socket: TLSSocket } }).socket.socket).destroy();
    expect((await atBob).getChildText('status')).to.equal('last words');
    await atCarol;
  });

  it('tells directed recipients, and only them, when a session that was never available ends', async () => {
    const bob = await connect('bob', 'b1', xml('presence'));
    const atBob = expectSilence(bob, (s) => s.is('presence') && s.attrs.from === 'alice@localhost/a1', 'presence of a session that was never available, at a subscriber');
    const carol = await connect('carol', 'c1', xml('presence'));
    const alice = await connect('alice', 'a1');
    const directed = nextPresence(carol, 'alice@localhost/a1');
    await alice.send(xml('presence', { to: 'carol@localhost' }));
    await directed;
    const withdrawn = nextPresence(carol, 'alice@localhost/a1', 'unavailable');
    await stopAll(alice);
    await withdrawn;
    // Presence still reaches bob: carol's, directed to him.
    await atBob.proveWith(() => carol.send(xml('presence', { to: 'bob@localhost/b1' }, xml('status', {}, 'for bob'))), (s) => isPresence(s, 'carol@localhost/c1') && s.getChildText('status') === 'for bob');
  });

  it('delivers presence sent to the own bare JID to the own available resources', async () => {
    const one = await connect('alice', 'a1', xml('presence'));
    const two = await connect('alice', 'a2', xml('presence'));
    const atTwo = next(two, (s) => isPresence(s, 'alice@localhost/a1') && s.getChildText('status') === 'note to self');
    await one.send(xml('presence', { to: 'alice@localhost' }, xml('status', {}, 'note to self')));
    await atTwo;
    // Not remembered as directed presence: nothing special when a1 leaves beyond the normal broadcast.
    const leaving = nextPresence(two, 'alice@localhost/a1', 'unavailable');
    await stopAll(one);
    await leaving;
  });
});
