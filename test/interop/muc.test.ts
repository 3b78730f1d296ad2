/**
 * Group chat in the client interop matrix: XMPP client software nobody here wrote joins a multi-user chat
 * room (XEP-0045, mod_muc's rooms on conference.localhost) on the real server and talks in it with other
 * occupants. The server's own MUC tests speak XEP-0045 as the spec reads to their authors; what proves that
 * real clients can use it is the clients themselves, each with the join, the occupant list, the reflection of
 * its own message and the subject handled the way its authors wrote them (slixmpp's join_muc_wait, for one,
 * waits for the self-presence and then the subject, and fails a room that never sends one).
 *
 *   slixmpp (Debian python3-slixmpp)     its xep_0045 plugin     test/interop/clients/slixmpp_client.py --muc
 *   nbxmpp (Debian python3-nbxmpp)       as Gajim joins a room   test/interop/clients/nbxmpp_client.py --muc
 *   Converse.js (npm converse.js)        headless Chromium: login form, "Add groupchat", the room's textarea
 *   StanzaJS (npm stanza)                its joinRoom over wss://
 *   @xmpp/client (npm)                   its defaults, the join presence written by hand (it has no MUC API)
 *   go-sendxmpp (Debian, mattn/go-xmpp)  --chatroom: joins, sends one groupchat message, leaves
 *
 * In each room the other occupants are this suite's @xmpp/client helper (test/support/xmpp.ts), alice (who
 * creates the room by joining it, as an instant room: XEP-0045 §10.1.2) and bob; the client under test is
 * always the foreign software. Every message is checked where it must arrive, with its text and with `from`
 * the sender's occupant JID (room@conference.localhost/nick). A failure shows the client's own output (the
 * helper scripts' JSON events and debug logs, go-sendxmpp --debug, StanzaJS and @xmpp/client traffic,
 * Converse's browser console).
 */
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { client as xmppClient } from '@xmpp/client';
import * as Stanza from 'stanza';
import { TestServer, type RawConfig } from '../support/server.js';
import { collect, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import { CA, GO_SENDXMPP, PYTHON, SCRIPTS, ExternalClient, converseInBrowser, debianVersion, killAll, npmVersion } from './external.js';

const ADMIN = 'admin@localhost:adminpass';
const HOST = 'localhost';
const SERVICE = `conference.${HOST}`;

const NS_MUC = 'http://jabber.org/protocol/muc';
const NS_MUC_USER = 'http://jabber.org/protocol/muc#user';
const NS_MUC_OWNER = 'http://jabber.org/protocol/muc#owner';

const ACCOUNTS = ['alice', 'bob', 'slixmpp', 'nbxmpp', 'converse', 'stanza', 'xmppjs', 'gosendxmpp'] as const;
const password = (user: string) => `${user}-pw`;
const jidOf = (user: string) => `${user}@${HOST}`;
const roomJid = (name: string) => `${name}@${SERVICE}`;

/** The matrix's server (c2s with STARTTLS required, /api, ws:// and a wss:// listener for StanzaJS) with the conference service and its admin commands. */
function mucConfig(): RawConfig {
  const config = xmppConfig({ mod_admin_extra: {}, mod_roster: {}, mod_presence: {}, mod_disco: {}, mod_muc: {}, mod_muc_admin: {} });
  (config.listen as unknown[]).push({ port: 0, ip: '127.0.0.1', module: 'service_http', tls: true, request_handlers: { '/websocket': 'service_http_ws' } });
  return config;
}

/** The status codes of a MUC presence (<x xmlns='…muc#user'><status code='110'/>…). */
const statusCodes = (s: Element): string[] =>
  s
    .getChild('x', NS_MUC_USER)
    ?.getChildren('status')
    .map((c) => c.attrs.code as string) ?? [];

/** A groupchat message with this body. */
const groupchat = (body: string) => (s: Element) => s.is('message') && s.attrs.type === 'groupchat' && s.getChildText('body') === body;
/** The presence of an occupant (available, or with `type` 'unavailable'). */
const occupantPresence = (occupant: string, type?: 'unavailable') => (s: Element) => s.is('presence') && s.attrs.from === occupant && s.attrs.type === type;

/** One of the helper occupants: logged in with test/support/xmpp.ts, in the room as `nick`, every stanza it received kept. */
interface Occupant {
  client: Client;
  /** room@conference.localhost/nick */
  jid: string;
  received: Element[];
  /** Its self-presence, as the room answered its join. */
  presence: Element;
  /** The stanzas received so far, for failure messages. */
  log: () => string;
}

describe('Group chat interop: XMPP software nobody here wrote in a XEP-0045 room', function () {
  this.timeout(60_000);
  let t: TestServer;
  const helpers: Client[] = [];

  const api = async (command: string, args: Record<string, unknown>) => {
    const res = await t.api(command, args, { basic: ADMIN });
    expect(res.status, `${command}: ${res.text}`).to.equal(200);
    return res.body;
  };

  /**
   * The next stanza `xmpp` receives that matches, waited for from now on; its failure carries the client's
   * output, and is never unhandled (.mocharc.json makes that fatal, and a step before the await may fail first).
   */
  const awaiting = (xmpp: Client, predicate: (s: Element) => boolean, ms: number, diagnostics: () => string): Promise<Element> => {
    const stanza = next(xmpp, predicate, ms).catch((err: Error) => Promise.reject(new Error(`${err.message}\n${diagnostics()}`)));
    stanza.catch(() => {});
    return stanza;
  };

  /**
   * Logs `user` in with this suite's helper and joins `room` as `nick`, resolving once its self-presence
   * (status 110) came back. A room its join created (status 201) is locked until its owner configures it:
   * the helper accepts the default configuration (the instant room, XEP-0045 §10.1.2), as clients do.
   */
  const occupant = async (user: string, room: string, nick: string): Promise<Occupant> => {
    const client = await login(t, { user, password: password(user), resource: 'helper' });
    helpers.push(client);
    const received = collect(client);
    const log = () => `--- what ${user} (${room}/${nick}) received:\n${received.map(String).join('\n')}`;
    await client.send(xml('presence'));
    const jid = `${room}/${nick}`;
    const self = awaiting(client, (s) => s.is('presence') && s.attrs.from === jid && (s.attrs.type === 'error' || statusCodes(s).includes('110')), 10_000, log);
    await client.send(xml('presence', { to: jid }, xml('x', { xmlns: NS_MUC }, xml('history', { maxstanzas: '0' }))));
    const presence = await self;
    expect(presence.attrs.type, `${user} could not join ${room}: ${presence}`).to.equal(undefined);
    if (statusCodes(presence).includes('201')) {
      const configured = await client.iqCaller.request(xml('iq', { type: 'set', to: room }, xml('query', { xmlns: NS_MUC_OWNER }, xml('x', { xmlns: 'jabber:x:data', type: 'submit' }))));
      expect(configured.attrs.type).to.equal('result');
    }
    return { client, jid, received, presence, log };
  };

  /** alice and bob in `room` (alice first: she creates it, unless it exists). */
  const aliceAndBob = async (room: string) => {
    const alice = await occupant('alice', room, 'alice');
    const bob = await occupant('bob', room, 'bob');
    return { alice, bob };
  };

  /** A groupchat message from an occupant to its room. */
  const say = (from: Occupant, body: string) => from.client.send(xml('message', { to: from.jid.split('/')[0], type: 'groupchat' }, xml('body', {}, body)));

  before(async () => {
    t = await TestServer.start(mucConfig());
    await t.bootstrapAdmin();
    for (const user of ACCOUNTS) await t.register(user, HOST, password(user));
  });
  afterEach(async () => {
    await killAll();
    await stopAll(...helpers.splice(0));
  });
  after(() => t?.stop());

  describe(`slixmpp ${debianVersion('python3-slixmpp')} (Debian python3-slixmpp, its xep_0045 plugin)`, () => {
    const run = (resource: string, args: string[]) =>
      ExternalClient.spawn(
        `slixmpp (${resource})`,
        [PYTHON, join(SCRIPTS, 'slixmpp_client.py'), '--jid', `${jidOf('slixmpp')}/${resource}`, '--password', password('slixmpp'), '--port', String(t.server.portOf('service_c2s')), '--ca', CA, '--wait', '40', ...args],
        { timeoutMs: 50_000 },
      );

    it('joins the room, sees the occupants, receives and sends groupchat messages, and leaves', async () => {
      const room = roomJid('room');
      const { alice, bob } = await aliceAndBob(room);
      // alice's join created the room (status 201), so she is its owner.
      expect(statusCodes(alice.presence)).to.include('201');
      expect(alice.presence.getChild('x', NS_MUC_USER)?.getChild('item')?.attrs).to.include({ affiliation: 'owner', role: 'moderator' });
      const slixJid = `${room}/slix`;
      let slix: ExternalClient | undefined;
      const diagnostics = (who: Occupant) => () => `${slix!.diagnostics()}\n${who.log()}`;
      // What alice and bob must see, watched for before slixmpp starts.
      const arrived = awaiting(alice.client, occupantPresence(slixJid), 40_000, diagnostics(alice));
      const atAlice = awaiting(alice.client, groupchat('hello from slixmpp'), 40_000, diagnostics(alice));
      const atBob = awaiting(bob.client, groupchat('hello from slixmpp'), 40_000, diagnostics(bob));
      const goneAtAlice = awaiting(alice.client, occupantPresence(slixJid, 'unavailable'), 40_000, diagnostics(alice));
      const goneAtBob = awaiting(bob.client, occupantPresence(slixJid, 'unavailable'), 40_000, diagnostics(bob));
      slix = run('slix', ['--muc', room, '--nick', 'slix', '--muc-expect', 'hello from alice', '--muc-send', 'hello from slixmpp']);

      // Its self-presence (110), after the presence of each occupant already there: join_muc_wait returns the
      // occupants it saw come online during the join, itself included.
      const joined = await slix.event('the join', (e) => e.event === 'muc_joined', 30_000);
      expect(joined, slix.diagnostics()).to.deep.include({ jid: slixJid, affiliation: 'none', role: 'participant' });
      expect(joined.codes, slix.diagnostics()).to.include(110);
      expect(joined.occupants, slix.diagnostics()).to.have.members([alice.jid, bob.jid, slixJid]);
      // The others' presences came before its own, as XEP-0045 §7.2.3 orders them.
      const presences = slix.events.filter((e) => e.event === 'muc_presence').map((e) => e.sender);
      expect(presences.slice(0, 3), slix.diagnostics()).to.deep.equal([alice.jid, bob.jid, slixJid]);
      expect(joined.roster, slix.diagnostics()).to.have.members(['alice', 'bob', 'slix']);
      expect((await arrived).getChild('x', NS_MUC_USER)?.getChild('item')?.attrs.role).to.equal('participant');

      await say(alice, 'hello from alice');
      const fromAlice = await slix.event('alice’s message', (e) => e.event === 'groupchat' && e.body === 'hello from alice');
      expect(fromAlice, slix.diagnostics()).to.deep.include({ sender: alice.jid, delayed: false });

      for (const message of [await atAlice, await atBob]) expect(message.attrs.from).to.equal(slixJid);
      // It saw its own message come back from the room (the reflection its script waits for), then left.
      const reflected = await slix.event('the reflection of its message', (e) => e.event === 'groupchat' && e.body === 'hello from slixmpp');
      // With the id it was sent with, by which a client knows the reflection for its own message (XEP-0045 §7.4).
      const sent = await slix.event('its message sent', (e) => e.event === 'muc_sent');
      expect(reflected, slix.diagnostics()).to.deep.include({ sender: slixJid, id: sent.id });
      await Promise.all([goneAtAlice, goneAtBob]);
      expect((await slix.exit(30_000)).code, slix.diagnostics()).to.equal(0);
      const left = await slix.event('its own unavailable presence', (e) => e.event === 'muc_left');
      expect(left.sender, slix.diagnostics()).to.equal(slixJid);
      expect(left.codes, slix.diagnostics()).to.include(110);
    });

    it('sees the subject another occupant sets, and the next joiner gets it on joining', async () => {
      const room = roomJid('room-subject');
      const { alice, bob } = await aliceAndBob(room);
      const subject = 'Interop subject, set by alice';
      const slix = run('slix', ['--muc', room, '--nick', 'slix', '--muc-expect-subject', subject]);
      await slix.event('the join', (e) => e.event === 'muc_joined', 30_000);
      const atBob = awaiting(bob.client, (s) => s.is('message') && s.getChildText('subject') === subject, 10_000, bob.log);
      await alice.client.send(xml('message', { to: room, type: 'groupchat' }, xml('subject', {}, subject)));
      const seen = await slix.event('the new subject', (e) => e.event === 'muc_subject' && e.subject === subject);
      expect(seen.sender, slix.diagnostics()).to.equal(alice.jid);
      expect((await atBob).attrs.from).to.equal(alice.jid);
      expect((await slix.exit(30_000)).code, slix.diagnostics()).to.equal(0);

      // A newcomer is told the subject as part of the join (join_muc_wait returns it).
      const later = run('slix2', ['--muc', room, '--nick', 'slix2']);
      const joined = await later.event('the join', (e) => e.event === 'muc_joined', 30_000);
      expect(joined.subject, later.diagnostics()).to.equal(subject);
      expect((await later.exit(30_000)).code, later.diagnostics()).to.equal(0);
    });
  });

  describe(`nbxmpp ${debianVersion('python3-nbxmpp')} (Debian python3-nbxmpp, Gajim's library)`, () => {
    it('asks the room what it is, joins a room the admin API created, and exchanges groupchat messages both ways', async () => {
      const room = roomJid('room-nbxmpp');
      // Made by an operator beforehand (mod_muc_admin's create_room), not by a join.
      await api('create_room', { name: 'room-nbxmpp', service: SERVICE, host: HOST });
      const { alice, bob } = await aliceAndBob(room);
      // The room was there before anyone joined: alice's join did not create it.
      expect(statusCodes(alice.presence)).to.not.include('201');
      const nbxJid = `${room}/gajim`;
      let nbx: ExternalClient | undefined;
      const diagnostics = (who: Occupant) => () => `${nbx!.diagnostics()}\n${who.log()}`;
      const atAlice = awaiting(alice.client, groupchat('hello from nbxmpp'), 40_000, diagnostics(alice));
      const atBob = awaiting(bob.client, groupchat('hello from nbxmpp'), 40_000, diagnostics(bob));
      const gone = awaiting(alice.client, occupantPresence(nbxJid, 'unavailable'), 40_000, diagnostics(alice));
      nbx = ExternalClient.spawn(
        'nbxmpp',
        [PYTHON, join(SCRIPTS, 'nbxmpp_client.py'), '--jid', `${jidOf('nbxmpp')}/gajim`, '--password', password('nbxmpp'), '--port', String(t.server.portOf('service_c2s')), '--ca', CA, '--wait', '40', '--muc', room, '--nick', 'gajim', '--muc-expect', 'hello from alice', '--muc-send', 'hello from nbxmpp'],
        { timeoutMs: 50_000 },
      );
      const info = await nbx.event('the room’s disco#info', (e) => e.event === 'muc_info' || e.event === 'muc_info_error', 30_000);
      expect(info.event, nbx.diagnostics()).to.equal('muc_info');
      expect(info.is_muc, nbx.diagnostics()).to.equal(true);
      expect(info.features, nbx.diagnostics()).to.include(NS_MUC);
      const joined = await nbx.event('the join', (e) => e.event === 'muc_joined', 30_000);
      expect(joined.jid, nbx.diagnostics()).to.equal(nbxJid);
      expect(joined.occupants, nbx.diagnostics()).to.have.members([alice.jid, bob.jid]);

      await say(alice, 'hello from alice');
      const fromAlice = await nbx.event('alice’s message', (e) => e.event === 'groupchat' && e.body === 'hello from alice');
      expect(fromAlice.sender, nbx.diagnostics()).to.equal(alice.jid);
      for (const message of [await atAlice, await atBob]) expect(message.attrs.from).to.equal(nbxJid);
      await gone;
      expect((await nbx.exit(30_000)).code, nbx.diagnostics()).to.equal(0);
      expect(nbx.events.find((e) => e.event === 'groupchat' && e.body === 'hello from nbxmpp'), nbx.diagnostics()).to.deep.include({ sender: nbxJid });
    });
  });

  describe(`Converse.js ${npmVersion('converse.js')} (npm converse.js) in Debian's Chromium ${debianVersion('chromium')}`, () => {
    const converse = converseInBrowser(() => `ws://127.0.0.1:${t.port}/websocket`);
    const diagnostics = converse.diagnostics;
    /** A page step whose failure carries the browser console. */
    const step = <T>(promise: Promise<T>): Promise<T> => promise.catch((err: Error) => Promise.reject(new Error(`${err.message}\n${diagnostics()}`)));

    it('opens the room through "Add groupchat", shows the occupants and a message from one, and sends one from the room’s textarea', async () => {
      const room = roomJid('room-converse');
      // The occupants join before the browser starts, so that they do not compete for the CPU.
      const { alice, bob } = await aliceAndBob(room);
      const converseJid = `${room}/converse`;
      const arrived = awaiting(alice.client, occupantPresence(converseJid), 40_000, () => `${diagnostics()}\n${alice.log()}`);
      const p = await converse.logIn(jidOf('converse'), password('converse'));
      // The control box's groupchats section, once logged in: its menu has "Add groupchat".
      await step(p.locator('converse-rooms-list .dropdown-toggle').click({ timeout: 20_000 }));
      await step(p.locator('converse-rooms-list .show-add-muc-modal').click());
      const modal = p.locator('converse-add-muc-modal');
      await step(modal.locator('input[name="chatroom"]').fill(room));
      await step(modal.locator('input[name="nickname"]').fill('converse'));
      await step(modal.locator('input[type="submit"][name="join"]').click());

      const muc = p.locator(`converse-muc[jid="${room}"]`);
      await arrived;
      // The occupant list shows the others (and itself).
      for (const nick of ['alice', 'bob', 'converse']) await step(muc.locator('.occupant-list .occupant-nick', { hasText: nick }).first().waitFor({ timeout: 20_000 }));

      await say(alice, 'Hello room, from alice');
      const text = muc.locator('.chat-msg__text');
      await step(text.filter({ hasText: 'Hello room, from alice' }).waitFor({ timeout: 15_000 }));
      // Shown under alice's nick.
      await step(muc.locator('.chat-msg', { hasText: 'Hello room, from alice' }).locator('.chat-msg__author', { hasText: 'alice' }).first().waitFor());

      const atAlice = awaiting(alice.client, groupchat('Hello from Converse'), 15_000, () => `${diagnostics()}\n${alice.log()}`);
      const atBob = awaiting(bob.client, groupchat('Hello from Converse'), 15_000, () => `${diagnostics()}\n${bob.log()}`);
      await step(muc.locator('textarea.chat-textarea').fill('Hello from Converse'));
      await step(muc.locator('textarea.chat-textarea').press('Enter'));
      for (const message of [await atAlice, await atBob]) expect(message.attrs.from).to.equal(converseJid);
      // Its own message in the room, as the room reflected it.
      await step(text.filter({ hasText: 'Hello from Converse' }).waitFor({ timeout: 10_000 }));
    });
  });

  describe(`StanzaJS ${npmVersion('stanza')} (npm stanza, its joinRoom, over wss://)`, () => {
    it('joins with joinRoom, exchanges a groupchat message each way, and leaves with leaveRoom', async () => {
      const room = roomJid('room-stanza');
      const { alice, bob } = await aliceAndBob(room);
      const wss = `wss://${HOST}:${t.server.ports()[2]}/websocket`;
      const agent = Stanza.createClient({ jid: jidOf('stanza'), resource: 'stanza', credentials: { password: password('stanza') }, transports: { websocket: wss, bosh: false } });
      const traffic: string[] = [];
      agent.on('raw:outgoing', (data: string) => traffic.push(`SEND ${data}`));
      agent.on('raw:incoming', (data: string) => traffic.push(`RECV ${data}`));
      const log = () => `--- StanzaJS traffic:\n${traffic.join('\n')}`;
      const started = new Promise<void>((resolve, reject) => {
        agent.once('session:started', () => resolve());
        agent.once('auth:failed', () => reject(new Error(`authentication failed\n${log()}`)));
        agent.once('disconnected', () => reject(new Error(`disconnected before the session started\n${log()}`)));
      });
      started.catch(() => {});
      agent.connect();
      try {
        await started;
        agent.sendPresence();
        const stanzaJid = `${room}/stanza`;
        const groupchats: Array<{ from: string; body?: string }> = [];
        const fromAlice = new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`alice's message never arrived: ${JSON.stringify(groupchats)}\n${log()}`)), 15_000);
          agent.on('groupchat', (m) => {
            groupchats.push({ from: m.from, body: m.body });
            if (m.body === 'hello from alice') {
              clearTimeout(timer);
              resolve();
            }
          });
        });
        fromAlice.catch(() => {});
        const joined = await Promise.race([
          agent.joinRoom(room, 'stanza'),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`joinRoom never resolved\n${log()}`)), 15_000)),
        ]).catch((err: unknown) => Promise.reject(err instanceof Error ? err : new Error(`joinRoom failed: ${JSON.stringify(err)}\n${log()}`)));
        expect(joined.from, log()).to.equal(stanzaJid);
        expect(joined.muc?.statusCodes, log()).to.include('110');

        await say(alice, 'hello from alice');
        await fromAlice;
        expect(groupchats.find((m) => m.body === 'hello from alice')?.from, log()).to.equal(alice.jid);

        const atAlice = awaiting(alice.client, groupchat('hello from StanzaJS'), 15_000, () => `${log()}\n${alice.log()}`);
        const atBob = awaiting(bob.client, groupchat('hello from StanzaJS'), 15_000, () => `${log()}\n${bob.log()}`);
        agent.sendMessage({ to: room, type: 'groupchat', body: 'hello from StanzaJS' });
        for (const message of [await atAlice, await atBob]) expect(message.attrs.from).to.equal(stanzaJid);

        const gone = awaiting(alice.client, occupantPresence(stanzaJid, 'unavailable'), 15_000, () => `${log()}\n${alice.log()}`);
        const left = await agent.leaveRoom(room);
        expect(left.from, log()).to.equal(stanzaJid);
        await gone;
      } finally {
        await agent.disconnect();
      }
    });
  });

  describe(`@xmpp/client ${npmVersion('@xmpp/client')} (npm, its own defaults)`, () => {
    it('joins with a MUC presence and exchanges a groupchat message each way', async () => {
      const room = roomJid('room-xmppjs');
      const { alice, bob } = await aliceAndBob(room);
      // The library as an application uses it: username and password, nothing of test/support/xmpp.ts's login.
      const app = xmppClient({ service: `xmpp://127.0.0.1:${t.server.portOf('service_c2s')}`, domain: HOST, username: 'xmppjs', password: password('xmppjs'), resource: 'xmppjs' });
      const traffic: string[] = [];
      app.on('send', (e: Element) => traffic.push(`SEND ${e.toString()}`));
      app.on('element', (e: Element) => traffic.push(`RECV ${e.toString()}`));
      app.on('error', (err: Error) => traffic.push(`ERROR ${err.message}`));
      (app as any).reconnect.stop();
      const log = () => `--- @xmpp/client traffic:\n${traffic.join('\n')}`;
      try {
        await app.start().catch((err: Error) => Promise.reject(new Error(`${err.message}\n${log()}`)));
        await app.send(xml('presence'));
        const appJid = `${room}/xmppjs`;
        const self = awaiting(app, (s) => s.is('presence') && s.attrs.from === appJid, 15_000, log);
        await app.send(xml('presence', { to: appJid }, xml('x', { xmlns: NS_MUC })));
        const presence = await self;
        expect(presence.attrs.type, log()).to.equal(undefined);
        expect(statusCodes(presence), log()).to.include('110');

        const atApp = awaiting(app, groupchat('hello from alice'), 15_000, log);
        await say(alice, 'hello from alice');
        expect((await atApp).attrs.from).to.equal(alice.jid);

        const atAlice = awaiting(alice.client, groupchat('hello from @xmpp/client'), 15_000, () => `${log()}\n${alice.log()}`);
        const atBob = awaiting(bob.client, groupchat('hello from @xmpp/client'), 15_000, () => `${log()}\n${bob.log()}`);
        await app.send(xml('message', { to: room, type: 'groupchat' }, xml('body', {}, 'hello from @xmpp/client')));
        for (const message of [await atAlice, await atBob]) expect(message.attrs.from).to.equal(appJid);
      } finally {
        await stopAll(app);
      }
    });
  });

  describe(`go-sendxmpp ${debianVersion('go-sendxmpp')} (Debian, mattn/go-xmpp; --chatroom)`, () => {
    let home: string;
    before(async () => {
      // Its configuration file is read from $HOME; the test gives everything on the command line instead.
      home = await mkdtemp(join(tmpdir(), 'go-sendxmpp-'));
    });
    after(() => rm(home, { recursive: true, force: true }));

    it('joins the room with --chatroom, sends a groupchat message the occupants receive, and leaves', async () => {
      const room = roomJid('room-gosendxmpp');
      const { alice, bob } = await aliceAndBob(room);
      const senderJid = `${room}/gosend`;
      let sender: ExternalClient | undefined;
      const diagnostics = (who: Occupant) => () => `${sender!.diagnostics()}\n${who.log()}`;
      const arrived = awaiting(alice.client, occupantPresence(senderJid), 30_000, diagnostics(alice));
      const atAlice = awaiting(alice.client, groupchat('hello from go-sendxmpp'), 30_000, diagnostics(alice));
      const atBob = awaiting(bob.client, groupchat('hello from go-sendxmpp'), 30_000, diagnostics(bob));
      const gone = awaiting(alice.client, occupantPresence(senderJid, 'unavailable'), 30_000, diagnostics(alice));
      // Go's TLS takes its trusted CAs from SSL_CERT_FILE: the test CA.
      sender = ExternalClient.spawn(
        'go-sendxmpp --chatroom',
        [GO_SENDXMPP, '--debug', '--username', jidOf('gosendxmpp'), '--password', password('gosendxmpp'), '--jserver', `127.0.0.1:${t.server.portOf('service_c2s')}`, '--chatroom', '--alias', 'gosend', room],
        { env: { SSL_CERT_FILE: CA, HOME: home }, stdin: 'hello from go-sendxmpp\n', timeoutMs: 30_000 },
      );
      await arrived;
      for (const message of [await atAlice, await atBob]) expect(message.attrs.from).to.equal(senderJid);
      await gone;
      expect((await sender.exit()).code, sender.diagnostics()).to.equal(0);
    });
  });
});
