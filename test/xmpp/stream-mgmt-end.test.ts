/**
 * How a stream-managed session ends (XEP-0198 §5), seen by every client involved: a failed <resume/> leaves
 * the detached session to end at its timeout (contacts told, no ghost left to swallow messages); and what
 * the session never acknowledged is handled once, as if sent to a full JID now gone (RFC 6121 §8.5.3.2) —
 * a message that other resources got by the same bare-JID delivery is not delivered to them again, nor
 * stored offline; one that nobody else got goes to another resource or offline storage with one <delay/>;
 * carbon copies, headlines and groupchat are dropped; IQ requests are answered with an error, except the
 * server's own pushes.
 *
 * The session that loses its connection is a raw peer, so that it never acknowledges anything; the others
 * are real clients.
 */
import { expect } from 'chai';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { TestServer } from '../support/server.js';
import { collect, expectSilence, login, next, stopAll, subscribe, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';
const PW = 'pw';
const NS_SM = 'urn:xmpp:sm:3';
const NS_DELAY = 'urn:xmpp:delay';
const NS_CARBONS = 'urn:xmpp:carbons:2';
/** The resumption timeout the lost sessions ask for (`max`), in seconds. */
const MAX = 1;
/** Long enough for a lost session to time out and for what follows to be routed. */
const AFTER_TIMEOUT_MS = MAX * 1000 + 1200;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How many times `pattern` (global) occurs in `text`. */
const occurrences = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].length;

/** The messages with this id among what a real client received. */
const withId = (stanzas: Element[], id: string) => stanzas.filter((s) => s.is('message') && s.attrs.id === id);

/** A raw session bound as `user@localhost/resource`, stream management enabled with resumption, available. */
async function managed(t: TestServer, user: string, resource: string, max = MAX): Promise<{ peer: RawXmppPeer; id: string }> {
  const peer = await RawXmppPeer.connect(t.server.portOf('service_c2s')!);
  await peer.login(user, PW, { resource });
  peer.write(`<enable xmlns='${NS_SM}' resume='true' max='${max}'/>`);
  const id = (await peer.waitFor(/<enabled\b[^>]*\bid=['"]([^'"]+)['"]/))[1]!;
  peer.write('<presence/>');
  // Its own available presence comes back (RFC 6121 §4.2.2): the server has handled it.
  await peer.waitFor(new RegExp(`<presence\\b[^>]*from=['"]${user}@localhost/${resource}['"]`));
  return { peer, id };
}

/** A real client, available. */
async function online(t: TestServer, user: string, resource: string): Promise<Client> {
  const client = await login(t, { user, password: PW, resource });
  const own = next(client, (s) => s.is('presence') && s.attrs.from === `${user}@localhost/${resource}`);
  await client.send(xml('presence'));
  await own;
  return client;
}

/**
 * Logs in, comes online, and returns the messages offline storage delivered then. `marker` first sends the
 * account one more message, stored last and so delivered last: its arrival proves that delivery works (an
 * empty result means something) and ends what is returned.
 */
async function messagesAtLogin(t: TestServer, user: string, marker: Client): Promise<Element[]> {
  const id = `marker-${Math.random().toString(36).slice(2)}`;
  // A client's stanzas are handled in order: once the note to itself is back, the marker is stored.
  const stored = next(marker, (s) => s.is('message') && s.attrs.id === `${id}-self`);
  await marker.send(xml('message', { to: `${user}@localhost`, type: 'chat', id }, xml('body', {}, 'marker')));
  await marker.send(xml('message', { to: marker.jid!.toString(), type: 'chat', id: `${id}-self` }, xml('body', {}, 'stored')));
  await stored;
  const client = await login(t, { user, password: PW, resource: 'later' });
  try {
    const received = collect(client);
    const last = next(client, (s) => s.is('message') && s.attrs.id === id, 10_000);
    await client.send(xml('presence'));
    await last;
    return received.filter((s) => s.is('message') && s.attrs.id !== id);
  } finally {
    await stopAll(client);
  }
}

/** Error stanzas: what the other clients must not get when a lost session's stanzas are handled. */
const isError = (s: Element) => s.attrs.type === 'error';

/**
 * A probe for expectSilence(client, isError): a message from `client` to an account that does not exist,
 * which comes back to it as an error.
 */
function bounce(client: Client): [() => Promise<void>, (s: Element) => boolean] {
  const id = `bounce-${Math.random().toString(36).slice(2)}`;
  return [() => client.send(xml('message', { to: 'nobody@localhost', type: 'chat', id }, xml('body', {}, 'anyone?'))), (s) => isError(s) && s.attrs.id === id];
}

/**
 * A probe for a client that must not get some message: another message to its full JID, from `from`. A
 * headline, which is dropped rather than stored offline if the client closes before acknowledging it.
 */
function direct(from: Client, to: string): [() => Promise<void>, (s: Element) => boolean] {
  const id = `probe-${Math.random().toString(36).slice(2)}`;
  return [() => from.send(xml('message', { to, type: 'headline', id }, xml('body', {}, 'probe'))), (s) => s.is('message') && s.attrs.id === id];
}

describe('stream management: the end of a session', () => {
  let t: TestServer;
  const clients: Array<Client | undefined> = [];
  const peers: RawXmppPeer[] = [];
  const track = <C extends Client | RawXmppPeer>(c: C): C => {
    if (c instanceof RawXmppPeer) peers.push(c);
    else clients.push(c);
    return c;
  };

  const sessionsOf = async (user: string) => (await t.api('user_sessions_info', { user, host: 'localhost' }, { basic: ADMIN })).body as unknown[];
  const connected = async () => (await t.api('connected_users', {}, { basic: ADMIN })).body as string[];

  before(async () => {
    t = await TestServer.start(
      xmppConfig({
        mod_stream_mgmt: { resume_timeout: 30, max_resume_timeout: 30 },
        mod_roster: {},
        mod_presence: {},
        mod_offline: {},
        mod_carboncopy: {},
        mod_blocking: {},
        mod_admin_extra: {},
      }),
    );
    await t.bootstrapAdmin();
    for (const user of ['alice', 'amy', 'bob', 'dave', 'dora', 'duke', 'dina', 'cara', 'ivan', 'hugo', 'dirk']) await t.server.services.accounts.register(user, 'localhost', PW);
    // bob is subscribed to alice's presence.
    const [alice, bob] = [await online(t, 'alice', 'setup'), await online(t, 'bob', 'setup')];
    await subscribe(bob, 'bob@localhost', alice, 'alice@localhost');
    await stopAll(alice, bob);
  });
  afterEach(async () => {
    for (const peer of peers.splice(0)) peer.destroy();
    await stopAll(...clients.splice(0));
    await pause(100);
  });
  after(() => t.stop());

  describe('a failed <resume/>', () => {
    it('leaves the session to end at its timeout: contacts get unavailable once, no session is listed, and messages are not swallowed', async () => {
      const bob = track(await online(t, 'bob', 'desk'));
      const atBob = collect(bob);
      const noErrors = expectSilence(bob, isError, 'an error at the sender');
      const { peer: phone, id } = await managed(t, 'alice', 'phone');
      phone.destroy();
      await pause(100);

      const retry = track(await RawXmppPeer.connect(t.server.portOf('service_c2s')!));
      await retry.authenticate('alice', PW);
      retry.write(`<resume xmlns='${NS_SM}' previd='${id}' h='7'/>`);
      const failed = (await retry.waitFor(/<failed\b[\s\S]*?<\/failed>|<failed\b[^>]*\/>/))[0];
      expect(failed).to.include('unexpected-request');
      // Still there, detached, until its timeout.
      expect(await connected()).to.include('alice@localhost/phone');

      await pause(AFTER_TIMEOUT_MS);
      const gone = atBob.filter((s) => s.is('presence') && s.attrs.from === 'alice@localhost/phone' && s.attrs.type === 'unavailable');
      expect(gone).to.have.length(1);
      expect(await sessionsOf('alice')).to.deep.equal([]);
      expect(await connected()).to.include('bob@localhost/desk').and.not.include('alice@localhost/phone');

      // A message to the bare JID now goes to offline storage, not into a ghost's queue.
      await bob.send(xml('message', { to: 'alice@localhost', type: 'chat', id: 'lost1' }, xml('body', {}, 'lost?')));
      await noErrors.proveWith(...bounce(bob));
      const later = await messagesAtLogin(t, 'alice', bob);
      expect(withId(later, 'lost1')).to.have.length(1);
    });

    it('still lets the client resume with a right counter before the timeout', async () => {
      const { peer: phone, id } = await managed(t, 'amy', 'phone', 2);
      phone.destroy();
      await pause(100);
      const retry = track(await RawXmppPeer.connect(t.server.portOf('service_c2s')!));
      await retry.authenticate('amy', PW);
      retry.write(`<resume xmlns='${NS_SM}' previd='${id}' h='99'/>`);
      await retry.waitFor(/<failed\b/);
      retry.write(`<resume xmlns='${NS_SM}' previd='${id}' h='0'/>`);
      await retry.waitFor(new RegExp(`<resumed\\b[^>]*previd=['"]${id}['"]`));
      // Resumed before its timeout ran out: the timer is stopped, the session lives on.
      await pause(2000 + 500);
      expect(await connected()).to.include('amy@localhost/phone');
    });
  });

  describe('unacknowledged messages', () => {
    it('are not delivered again to a resource that got the same bare-JID message, nor stored offline', async () => {
      const { peer: r1 } = await managed(t, 'dave', 'r1');
      const r2 = track(await online(t, 'dave', 'r2'));
      const bob = track(await online(t, 'bob', 'z'));
      const atR2 = collect(r2);
      const noErrors = expectSilence(bob, isError, 'an error at the sender');
      const first = next(r2, (s) => withId([s], 'dup1').length > 0);
      await bob.send(xml('message', { to: 'dave@localhost', type: 'chat', id: 'dup1' }, xml('body', {}, 'to bare, both prio 0')));
      await r1.waitFor(/<message\b[^>]*id=['"]dup1['"]/);
      await first;
      const again = expectSilence(r2, (s) => withId([s], 'dup1').length > 0, 'dup1 a second time');

      r1.destroy();
      await pause(AFTER_TIMEOUT_MS);
      expect(atR2.filter((s) => s.is('presence') && s.attrs.from === 'dave@localhost/r1' && s.attrs.type === 'unavailable')).to.have.length(1);
      await again.proveWith(...direct(bob, 'dave@localhost/r2'));
      expect(withId(atR2, 'dup1')).to.have.length(1);
      await noErrors.proveWith(...bounce(bob));
      await stopAll(r2);
      expect(withId(await messagesAtLogin(t, 'dave', bob), 'dup1')).to.deep.equal([]);
    });

    it('are not delivered again to a resource without stream management that got them first', async () => {
      // Records are kept only for accounts with a managed session: a resource without stream management
      // (a raw client: @xmpp/client enables it by itself) that got the message before the managed one must
      // count as having it all the same.
      const r2 = track(await RawXmppPeer.connect(t.server.portOf('service_c2s')!));
      await r2.login('dirk', PW, { resource: 'r2' });
      r2.write('<presence/>');
      await r2.waitFor(/<presence\b[^>]*from=['"]dirk@localhost\/r2['"]/);
      const { peer: r1 } = await managed(t, 'dirk', 'r1');
      const bob = track(await online(t, 'bob', 'x'));
      await bob.send(xml('message', { to: 'dirk@localhost', type: 'chat', id: 'dup2' }, xml('body', {}, 'to bare, r2 bound first')));
      await r2.waitFor(/<message\b[^>]*id=['"]dup2['"]/);
      await r1.waitFor(/<message\b[^>]*id=['"]dup2['"]/);

      r1.destroy();
      await pause(AFTER_TIMEOUT_MS);
      // The same way still delivers: a headline to r2 arrives, after anything the lost session left.
      const [send] = direct(bob, 'dirk@localhost/r2');
      await send();
      await r2.waitFor(/<message\b[^>]*id=['"]probe-/);
      expect(occurrences(r2.all, /<message\b[^>]*id=['"]dup2['"]/g)).to.equal(1);
      r2.write('</stream:stream>');
      await r2.waitClosed();
      expect(withId(await messagesAtLogin(t, 'dirk', bob), 'dup2')).to.deep.equal([]);
    });

    it('go to another resource once, with the server\'s <delay/>, when they were for the lost session alone', async () => {
      const { peer: r1 } = await managed(t, 'dora', 'r1');
      const r2 = track(await online(t, 'dora', 'r2'));
      const bob = track(await online(t, 'bob', 'y'));
      const atR2 = collect(r2);
      const sentAt = Date.now();
      await bob.send(xml('message', { to: 'dora@localhost/r1', type: 'chat', id: 'full1' }, xml('body', {}, 'for r1 only')));
      await r1.waitFor(/<message\b[^>]*id=['"]full1['"]/);
      r1.destroy();
      await pause(AFTER_TIMEOUT_MS);
      const got = withId(atR2, 'full1');
      expect(got).to.have.length(1);
      expect(got[0]!.attrs.to).to.equal('dora@localhost/r1');
      const delays = got[0]!.getChildren('delay', NS_DELAY);
      expect(delays).to.have.length(1);
      expect(delays[0]!.attrs.from).to.equal('localhost');
      // Stamped with when it first reached r1, not when it was routed again.
      expect(Date.parse(delays[0]!.attrs.stamp)).to.be.within(sentAt - 1000, sentAt + 1000);
    });

    it('go to offline storage once when every resource that got them is lost, and keep one <delay/> round after round', async () => {
      const bob = track(await online(t, 'bob', 'x'));
      const noErrors = expectSilence(bob, isError, 'an error at the sender');
      const { peer: r1 } = await managed(t, 'duke', 'r1');
      const { peer: r2 } = await managed(t, 'duke', 'r2');
      const sentAt = Date.now();
      await bob.send(xml('message', { to: 'duke@localhost', type: 'chat', id: 'round' }, xml('body', {}, 'again and again')));
      await r1.waitFor(/<message\b[^>]*id=['"]round['"]/);
      await r2.waitFor(/<message\b[^>]*id=['"]round['"]/);
      r1.destroy();
      r2.destroy();
      await pause(AFTER_TIMEOUT_MS);

      // Twice more: delivered from offline storage to a session that is lost without acknowledging it.
      for (let round = 0; round < 2; round++) {
        const { peer } = await managed(t, 'duke', `again${round}`);
        await peer.waitFor(/<message\b[^>]*id=['"]round['"]/);
        await pause(200);
        expect(occurrences(peer.all, /<message\b[^>]*id=['"]round['"]/g)).to.equal(1);
        expect(occurrences(peer.all, /<delay\b/g)).to.equal(1);
        peer.destroy();
        await pause(AFTER_TIMEOUT_MS);
      }

      const last = withId(await messagesAtLogin(t, 'duke', bob), 'round');
      expect(last).to.have.length(1);
      const delays = last[0]!.getChildren('delay', NS_DELAY);
      expect(delays).to.have.length(1);
      expect(Date.parse(delays[0]!.attrs.stamp)).to.be.within(sentAt - 1000, sentAt + 1000);
      await noErrors.proveWith(...bounce(bob));
    });

    it('of type headline or groupchat are dropped, without an error', async () => {
      const { peer: r1 } = await managed(t, 'dina', 'r1');
      const r2 = track(await online(t, 'dina', 'r2'));
      const bob = track(await online(t, 'bob', 'w'));
      const atR2 = expectSilence(r2, (s) => s.is('message'), 'a headline or groupchat message of the lost session');
      const noErrors = expectSilence(bob, isError, 'an error at the sender');
      await bob.send(xml('message', { to: 'dina@localhost/r1', type: 'headline', id: 'h1' }, xml('body', {}, 'news')));
      await bob.send(xml('message', { to: 'dina@localhost/r1', type: 'groupchat', id: 'g1' }, xml('body', {}, 'room talk')));
      await r1.waitFor(/<message\b[^>]*id=['"]g1['"]/);
      r1.destroy();
      await pause(AFTER_TIMEOUT_MS);
      await atR2.proveWith(...direct(bob, 'dina@localhost/r2'));
      await noErrors.proveWith(...bounce(bob));
      await stopAll(r2);
      expect(await messagesAtLogin(t, 'dina', bob)).to.deep.equal([]);
    });
  });

  describe('server copies and requests', () => {
    it('drops carbon copies: the other resources get nothing twice', async () => {
      const enableCarbons = `<iq type='set' id='cc'><enable xmlns='${NS_CARBONS}'/></iq>`;
      const { peer: c1 } = await managed(t, 'cara', 'c1');
      c1.write(enableCarbons);
      await c1.waitFor(/<iq\b[^>]*id=['"]cc['"][^>]*type=['"]result['"]|<iq\b[^>]*type=['"]result['"][^>]*id=['"]cc['"]/);
      const c2 = track(await online(t, 'cara', 'c2'));
      expect((await c2.iqCaller.request(xml('iq', { type: 'set' }, xml('enable', { xmlns: NS_CARBONS })))).attrs.type).to.equal('result');
      const bob = track(await online(t, 'bob', 'v'));
      const atC2 = collect(c2);
      const atBob = collect(bob);
      const noErrors = expectSilence(bob, isError, 'an error at the sender');

      // A received carbon (bob → c2) and a sent carbon (c2 → bob) wait in c1's queue.
      await bob.send(xml('message', { to: 'cara@localhost/c2', type: 'chat', id: 'cc1' }, xml('body', {}, 'to c2')));
      await c1.waitFor(/<received\b[\s\S]*?id=['"]cc1['"]/);
      await c2.send(xml('message', { to: 'bob@localhost/v', type: 'chat', id: 'cc2' }, xml('body', {}, 'from c2')));
      await c1.waitFor(/<sent\b[\s\S]*?id=['"]cc2['"]/);
      await pause(200);
      const noCopies = expectSilence(c2, (s) => s.is('message') && (s.getChild('received', NS_CARBONS) ?? s.getChild('sent', NS_CARBONS)) !== undefined, "a carbon copy from the lost session's queue");
      c1.destroy();
      await pause(AFTER_TIMEOUT_MS);

      expect(withId(atC2, 'cc1')).to.have.length(1);
      await noCopies.proveWith(...direct(bob, 'cara@localhost/c2'));
      expect(withId(atBob, 'cc2')).to.have.length(1);
      await noErrors.proveWith(...bounce(bob));
      await stopAll(c2);
      expect(await messagesAtLogin(t, 'cara', bob)).to.deep.equal([]);
    });

    it('answers an IQ request the session never answered with service-unavailable, once', async () => {
      const { peer: r1 } = await managed(t, 'ivan', 'r1');
      const bob = track(await online(t, 'bob', 'u'));
      const atBob = collect(bob);
      await bob.send(xml('iq', { type: 'get', to: 'ivan@localhost/r1', id: 'q1' }, xml('query', { xmlns: 'jabber:iq:version' })));
      await r1.waitFor(/<iq\b[^>]*id=['"]q1['"]/);
      r1.destroy();
      await pause(AFTER_TIMEOUT_MS);
      const answers = atBob.filter((s) => s.is('iq') && s.attrs.id === 'q1');
      expect(answers).to.have.length(1);
      expect(answers[0]!.attrs.type).to.equal('error');
      expect(answers[0]!.attrs.from).to.equal('ivan@localhost/r1');
      expect(answers[0]!.getChild('error')!.getChild('service-unavailable', 'urn:ietf:params:xml:ns:xmpp-stanzas')).to.not.equal(undefined);
    });

    it('answers nothing for the server\'s own pushes: the account\'s other resources get no error', async () => {
      const { peer: r1 } = await managed(t, 'hugo', 'r1');
      r1.write(`<iq type='get' id='bl'><blocklist xmlns='urn:xmpp:blocking'/></iq>`);
      await r1.waitFor(/<blocklist\b/);
      r1.write(`<iq type='get' id='ro'><query xmlns='jabber:iq:roster'/></iq>`);
      await r1.waitFor(/<query\b[^>]*jabber:iq:roster/);
      const r2 = track(await online(t, 'hugo', 'r2'));
      const noErrors = expectSilence(r2, isError, 'an error for a push the lost session never answered');
      // A blocklist push (from the account's bare JID) and a roster push (no 'from') wait in r1's queue.
      await r2.iqCaller.request(xml('iq', { type: 'set' }, xml('block', { xmlns: 'urn:xmpp:blocking' }, xml('item', { jid: 'spam@localhost' }))));
      await r2.iqCaller.request(xml('iq', { type: 'set' }, xml('query', { xmlns: 'jabber:iq:roster' }, xml('item', { jid: 'friend@localhost' }))));
      await r1.waitFor(/<block\b/);
      await r1.waitFor(/friend@localhost/);
      r1.destroy();
      await pause(AFTER_TIMEOUT_MS);
      await noErrors.proveWith(...bounce(r2));
    });
  });
});
