/**
 * mod_admin_extra's session and presence commands against real clients on every transport (TCP with
 * STARTTLS, plain TCP, WebSocket): connected_users_info and user_sessions_info with each field of the
 * spec's Session resource, connected_users_vhost, num_resources, resource_num, kick_session,
 * get_presence, set_presence (broadcast as if the client had sent it), status_list*, status_num*; over
 * HTTP, and a sample through servicectl and XML-RPC. Bad input is refused with a clear error and changes
 * nothing.
 */
import { expect } from 'chai';
import type { TLSSocket } from 'node:tls';
import { servicectl } from '../support/cli.js';
import { freePort } from '../support/process.js';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { request, TestServer } from '../support/server.js';
import { expectSilence, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';
const NODE = 'node1@testhost';
const NS_ROSTER = 'jabber:iq:roster';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Logs in over plain TCP (a listener without STARTTLS) with PLAIN, binds `resource`. */
async function plainLogin(port: number, user: string, resource: string): Promise<RawXmppPeer> {
  const peer = await RawXmppPeer.connect(port);
  await peer.open({ to: 'localhost' });
  peer.resetReceived();
  peer.write(`<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>${Buffer.from(`\0${user}\0${user}-pw`).toString('base64')}</auth>`);
  await peer.waitFor(/<success\b/);
  await peer.open({ to: 'localhost' });
  peer.resetReceived();
  peer.write(`<iq type='set' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>${resource}</resource></bind></iq>`);
  await peer.waitFor(/<jid>[^<]+<\/jid>/);
  peer.resetReceived();
  return peer;
}

/** The client's own port on its connection (TCP, TLS over TCP, or WebSocket). */
function localPort(c: Client): number {
  const socket = (c as any).socket?.socket;
  return (socket as TLSSocket).localPort ?? socket?._socket?.localPort;
}

async function requestRoster(c: Client): Promise<void> {
  await c.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: NS_ROSTER })));
}

/** The full subscription handshake both ways, with two throw-away sessions. */
async function befriend(t: TestServer, a: string, b: string): Promise<void> {
  const one = await login(t, { user: a, password: `${a}-pw`, resource: 'setup' });
  const two = await login(t, { user: b, password: `${b}-pw`, resource: 'setup' });
  try {
    for (const c of [one, two]) {
      await requestRoster(c);
      await c.send(xml('presence'));
    }
    for (const [asker, approver, askerJid, approverJid] of [[one, two, `${a}@localhost`, `${b}@localhost`], [two, one, `${b}@localhost`, `${a}@localhost`]] as const) {
      const asked = next(approver, (s) => s.is('presence') && s.attrs.type === 'subscribe');
      await asker.send(xml('presence', { type: 'subscribe', to: approverJid }));
      await asked;
      const approved = next(asker, (s) => s.is('presence') && s.attrs.type === 'subscribed');
      await approver.send(xml('presence', { type: 'subscribed', to: askerJid }));
      await approved;
    }
  } finally {
    await stopAll(one, two);
  }
}

function presence(show: string | undefined, status: string | undefined, priority: number): Element {
  return xml('presence', {}, show ? xml('show', {}, show) : undefined, status ? xml('status', {}, status) : undefined, xml('priority', {}, String(priority)));
}

describe('mod_admin_extra: sessions and presence', () => {
  let t: TestServer;
  let plainPort: number;
  let xmlrpcUrl: string;
  const clients: Client[] = [];
  const peers: RawXmppPeer[] = [];
  const api = async (command: string, args: Record<string, unknown>, prefix?: string) => t.api(command, args, { basic: ADMIN, prefix });
  const ok = async (command: string, args: Record<string, unknown>, prefix?: string) => {
    const res = await api(command, args, prefix);
    expect(res.status, `${command}: ${res.text}`).to.equal(200);
    return res.body;
  };
  const connect = async (user: string, resource: string, options: { transport?: 'tcp' | 'ws'; host?: string; presence?: Element } = {}) => {
    const c = await login(t, { user, password: `${user}-pw`, resource, transport: options.transport, host: options.host });
    clients.push(c);
    if (options.presence) {
      const own = next(c, (s) => s.is('presence') && s.attrs.from === `${user}@${options.host ?? 'localhost'}/${resource}`);
      await c.send(options.presence);
      await own;
    }
    return c;
  };
  const connectPlain = async (user: string, resource: string) => {
    const peer = await plainLogin(plainPort, user, resource);
    peers.push(peer);
    return peer;
  };
  /** Waits until the server lists exactly these sessions of the account (connections close asynchronously). */
  const waitResources = async (user: string, expected: string[]) => {
    for (let i = 0; i < 100; i++) {
      if (JSON.stringify(await ok('user_resources', { user, host: 'localhost' })) === JSON.stringify(expected)) return;
      await pause(50);
    }
    expect(await ok('user_resources', { user, host: 'localhost' })).to.deep.equal(expected);
  };

  before(async () => {
    plainPort = await freePort();
    const config = xmppConfig({ mod_admin_extra: {}, mod_roster: {}, mod_presence: {} });
    config.node_name = NODE;
    (config.listen as any[]).push({ port: plainPort, ip: '127.0.0.1', module: 'service_c2s', starttls: false, starttls_required: false });
    (config.listen as any[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    const accounts = t.server.services.accounts;
    for (const user of ['alice', 'bob', 'carol']) await accounts.register(user, 'localhost', `${user}-pw`);
    await accounts.register('dave', 'example.com', 'dave-pw');
    xmlrpcUrl = `http://127.0.0.1:${t.server.portOf('service_xmlrpc')}/`;
    await befriend(t, 'alice', 'bob');
    await waitResources('alice', []);
    await waitResources('bob', []);
  });
  afterEach(async () => {
    await stopAll(...clients.splice(0));
    for (const peer of peers.splice(0)) peer.destroy();
    await waitResources('alice', []);
    await waitResources('bob', []);
  });
  after(() => t.stop());

  describe('connected_users_info and user_sessions_info', () => {
    it('list every session with each field of the Session resource, transport by transport', async () => {
      const started = Date.now();
      const laptop = await connect('alice', 'laptop', { presence: presence('dnd', 'In a meeting', 5) });
      const phone = await connect('alice', 'phone', { transport: 'ws' });
      const desk = await connectPlain('bob', 'desk');
      const tablet = await connect('dave', 'tablet', { transport: 'ws', host: 'example.com' });
      // Uptime is whole seconds: wait past the first one.
      await pause(1500);
      const list: any[] = await ok('connected_users_info', {});
      const elapsed = Math.ceil((Date.now() - started) / 1000);
      expect(list.map((s) => s.jid)).to.deep.equal(['alice@localhost/laptop', 'alice@localhost/phone', 'bob@localhost/desk', 'dave@example.com/tablet']);
      for (const s of list) {
        expect(Object.keys(s)).to.deep.equal(['jid', 'connection', 'ip', 'port', 'priority', 'node', 'uptime', 'status', 'resource', 'statustext']);
        expect(s.uptime, s.jid).to.be.within(1, elapsed);
      }
      const [a1, a2, b1, d1] = list;
      expect(a1).to.deep.include({ connection: 'c2s_tls', ip: '127.0.0.1', port: localPort(laptop), priority: 5, node: NODE, status: 'dnd', resource: 'laptop', statustext: 'In a meeting' });
      expect(a2).to.deep.include({ connection: 'websocket', ip: '127.0.0.1', port: localPort(phone), priority: 0, node: NODE, status: 'unavailable', resource: 'phone', statustext: '' });
      expect(b1).to.deep.include({ connection: 'c2s', ip: '127.0.0.1', port: desk.socket.localPort, priority: 0, node: NODE, status: 'unavailable', resource: 'desk', statustext: '' });
      expect(d1).to.deep.include({ connection: 'websocket', port: localPort(tablet), resource: 'tablet' });

      const mine: any[] = await ok('user_sessions_info', { user: 'alice', host: 'localhost' });
      const { jid: _a1, ...laptopInfo } = a1;
      const { jid: _a2, ...phoneInfo } = a2;
      expect(mine.map((s) => ({ ...s, uptime: 0 }))).to.deep.equal([{ ...laptopInfo, uptime: 0 }, { ...phoneInfo, uptime: 0 }]);
      expect(Object.keys(mine[0])).to.deep.equal(['connection', 'ip', 'port', 'priority', 'node', 'uptime', 'status', 'resource', 'statustext']);
    });

    it('follow a presence change and a closed session', async () => {
      const laptop = await connect('alice', 'laptop', { presence: presence(undefined, undefined, 1) });
      await connect('alice', 'phone', { transport: 'ws', presence: presence('xa', 'gone fishing', -1) });
      let mine: any[] = await ok('user_sessions_info', { user: 'alice', host: 'localhost' });
      expect(mine.map((s) => [s.resource, s.status, s.priority, s.statustext])).to.deep.equal([
        ['laptop', 'available', 1, ''],
        ['phone', 'xa', -1, 'gone fishing'],
      ]);
      await laptop.send(xml('presence', { type: 'unavailable' }, xml('status', {}, 'bye')));
      await laptop.stop();
      await waitResources('alice', ['phone']);
      mine = await ok('user_sessions_info', { user: 'alice', host: 'localhost' });
      expect(mine.map((s) => s.resource)).to.deep.equal(['phone']);
    });

    it('user_sessions_info: an offline account has none; an unknown account is 404, a host not served 400', async () => {
      expect(await ok('user_sessions_info', { user: 'carol', host: 'localhost' })).to.deep.equal([]);
      const unknown = await api('user_sessions_info', { user: 'nobody', host: 'localhost' });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.message).to.equal('account nobody@localhost does not exist');
      const host = await api('user_sessions_info', { user: 'alice', host: 'elsewhere.org' });
      expect(host.status).to.equal(400);
      expect(host.body.message).to.match(/unknown virtual host 'elsewhere\.org'/);
      const name = await api('user_sessions_info', { user: 'a b@c', host: 'localhost' });
      expect(name.status).to.equal(400);
    });

    it('connected_users_info is empty with nobody connected', async () => {
      expect(await ok('connected_users_info', {})).to.deep.equal([]);
    });
  });

  describe('connected_users_vhost, num_resources, resource_num', () => {
    it('connected_users_vhost lists the sessions of one vhost, sorted', async () => {
      await connect('alice', 'phone', { transport: 'ws' });
      await connect('alice', 'laptop');
      await connectPlain('bob', 'desk');
      await connect('dave', 'tablet', { transport: 'ws', host: 'example.com' });
      expect(await ok('connected_users_vhost', { host: 'localhost' })).to.deep.equal(['alice@localhost/laptop', 'alice@localhost/phone', 'bob@localhost/desk']);
      expect(await ok('connected_users_vhost', { host: 'EXAMPLE.com' })).to.deep.equal(['dave@example.com/tablet']);
      const res = await api('connected_users_vhost', { host: 'elsewhere.org' });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/unknown virtual host 'elsewhere\.org': this server serves localhost, example\.com/);
    });

    it('num_resources counts an account\'s sessions; resource_num picks one, counting from 1 in user_resources order', async () => {
      await connect('alice', 'zeta', { transport: 'ws' });
      await connect('alice', 'alpha');
      await connectPlain('alice', 'mid');
      expect(await ok('num_resources', { user: 'alice', host: 'localhost' })).to.equal(3);
      expect(await ok('num_resources', { user: 'carol', host: 'localhost' })).to.equal(0);
      const order = await ok('user_resources', { user: 'alice', host: 'localhost' });
      expect(order).to.deep.equal(['alpha', 'mid', 'zeta']);
      for (const [i, resource] of order.entries()) expect(await ok('resource_num', { user: 'alice', host: 'localhost', num: i + 1 })).to.equal(resource);
      // GET with a query string carries the integer as text.
      const viaGet = await t.api('resource_num', { user: 'alice', host: 'localhost', num: 2 }, { basic: ADMIN, method: 'GET' });
      expect(viaGet.body).to.equal('mid');
    });

    it('answers 404 naming an account that is not registered, in the session commands of the kernel too', async () => {
      for (const command of ['user_resources', 'kick_user', 'num_resources', 'user_sessions_info']) {
        const res = await api(command, { user: 'nobody', host: 'localhost' });
        expect(res.status, command).to.equal(404);
        expect(res.body.message, command).to.equal('account nobody@localhost does not exist');
      }
      const v0 = await t.api('kick_user', { user: 'nobody', host: 'localhost' }, { basic: ADMIN, prefix: '/api/v0' });
      expect(v0.status).to.equal(404);
    });

    it('resource_num: a num out of range is a 400 naming it, also for an offline account', async () => {
      await connect('alice', 'only');
      for (const num of [0, -1, 2]) {
        const res = await api('resource_num', { user: 'alice', host: 'localhost', num });
        expect(res.status, String(num)).to.equal(400);
        expect(res.body.message).to.equal(`num must be between 1 and 1 (the sessions of alice@localhost), got ${num}`);
      }
      const offline = await api('resource_num', { user: 'carol', host: 'localhost', num: 1 });
      expect(offline.status).to.equal(400);
      expect(offline.body.message).to.equal("argument 'num': carol@localhost has no session: there is no resource number 1");
      const notANumber = await api('resource_num', { user: 'alice', host: 'localhost', num: 'first' });
      expect(notANumber.status).to.equal(400);
      expect(notANumber.body.message).to.match(/'num'/);
      expect(await ok('user_resources', { user: 'alice', host: 'localhost' })).to.deep.equal(['only']);
    });

    it('num_resources and resource_num: an unknown account is 404', async () => {
      for (const [command, args] of [['num_resources', {}], ['resource_num', { num: 1 }]] as const) {
        const res = await api(command, { user: 'nobody', host: 'localhost', ...args });
        expect(res.status, command).to.equal(404);
        expect(res.body.message).to.equal('account nobody@localhost does not exist');
      }
    });
  });

  describe('kick_session', () => {
    it('closes one session with the reason as the stream error text; the others stay, and contacts see it go', async () => {
      const bob = await connect('bob', 'watch', { presence: presence(undefined, undefined, 0) });
      const laptop = await connect('alice', 'laptop', { presence: presence(undefined, undefined, 0) });
      const phone = await connect('alice', 'phone', { transport: 'ws' });
      const error = new Promise<string>((resolve) => laptop.on('error', (err: any) => resolve(`${err.condition}: ${err.text}`)));
      const gone = next(bob, (s) => s.is('presence') && s.attrs.from === 'alice@localhost/laptop' && s.attrs.type === 'unavailable');
      expect(await ok('kick_session', { user: 'alice', host: 'localhost', resource: 'laptop', reason: 'Stuck connection' })).to.equal(0);
      expect(await error).to.equal('policy-violation: Stuck connection');
      await gone;
      expect(await ok('user_resources', { user: 'alice', host: 'localhost' })).to.deep.equal(['phone']);
      expect(phone.status).to.equal('online');
    });

    it('says "Kicked by administrator" when the reason is empty; kicks a plain TCP session too', async () => {
      const desk = await connectPlain('bob', 'desk');
      expect(await ok('kick_session', { user: 'bob', host: 'localhost', resource: 'desk', reason: '' })).to.equal(0);
      const error = await desk.streamError();
      expect(error).to.deep.include({ condition: 'policy-violation', text: 'Kicked by administrator' });
      await desk.waitClosed();
      expect(await ok('user_resources', { user: 'bob', host: 'localhost' })).to.deep.equal([]);
    });

    it('a resource that is not connected, or an unknown account, is 404 and kicks nobody', async () => {
      await connect('alice', 'laptop');
      const missing = await api('kick_session', { user: 'alice', host: 'localhost', resource: 'tablet', reason: 'x' });
      expect(missing.status).to.equal(404);
      expect(missing.body.message).to.equal("alice@localhost has no session with resource 'tablet'");
      const unknown = await api('kick_session', { user: 'nobody', host: 'localhost', resource: 'laptop', reason: 'x' });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.message).to.equal('account nobody@localhost does not exist');
      const missingArg = await api('kick_session', { user: 'alice', host: 'localhost', resource: 'laptop' });
      expect(missingArg.status).to.equal(400);
      expect(missingArg.body.message).to.match(/missing argument 'reason'/);
      expect(await ok('user_resources', { user: 'alice', host: 'localhost' })).to.deep.equal(['laptop']);
    });
  });

  describe('get_presence', () => {
    it('answers the available resource with the highest priority, with its show and status', async () => {
      await connect('alice', 'low', { presence: presence('away', 'at lunch', 1) });
      await connect('alice', 'high', { transport: 'ws', presence: presence('dnd', 'busy', 10) });
      await connect('alice', 'silent');
      expect(await ok('get_presence', { user: 'alice', host: 'localhost' })).to.deep.equal({ jid: 'alice@localhost/high', show: 'dnd', status: 'busy' });
    });

    it('says available when the client sent no show, and ties go to the first bound', async () => {
      await connect('alice', 'first', { presence: presence(undefined, undefined, 3) });
      await connect('alice', 'second', { presence: presence('chat', 'talk to me', 3) });
      expect(await ok('get_presence', { user: 'alice', host: 'localhost' })).to.deep.equal({ jid: 'alice@localhost/first', show: 'available', status: '' });
    });

    it('is unavailable with the bare JID when no session is available; an unknown account is 404', async () => {
      expect(await ok('get_presence', { user: 'carol', host: 'localhost' })).to.deep.equal({ jid: 'carol@localhost', show: 'unavailable', status: '' });
      await connect('carol', 'quiet');
      expect(await ok('get_presence', { user: 'carol', host: 'localhost' })).to.deep.equal({ jid: 'carol@localhost', show: 'unavailable', status: '' });
      const res = await api('get_presence', { user: 'nobody', host: 'localhost' });
      expect(res.status).to.equal(404);
    });
  });

  describe('set_presence', () => {
    it('sets a session\'s presence as if its client had sent it: the client and a subscribed contact receive it', async () => {
      const bob = await connect('bob', 'watch', { presence: presence(undefined, undefined, 0) });
      const laptop = await connect('alice', 'laptop', { presence: presence(undefined, undefined, 0) });
      const atBob = next(bob, (s) => s.is('presence') && s.attrs.from === 'alice@localhost/laptop' && s.getChildText('show') === 'away');
      const own = next(laptop, (s) => s.is('presence') && s.attrs.from === 'alice@localhost/laptop' && s.getChildText('show') === 'away');
      expect(await ok('set_presence', { user: 'alice', host: 'localhost', resource: 'laptop', type: 'available', show: 'away', status: 'BB', priority: 7 })).to.equal(0);
      for (const stanza of [await atBob, await own]) {
        expect(stanza.attrs.type).to.equal(undefined);
        expect(stanza.getChildText('status')).to.equal('BB');
        expect(stanza.getChildText('priority')).to.equal('7');
      }
      expect(await ok('get_presence', { user: 'alice', host: 'localhost' })).to.deep.equal({ jid: 'alice@localhost/laptop', show: 'away', status: 'BB' });
      const [info] = await ok('user_sessions_info', { user: 'alice', host: 'localhost' });
      expect(info).to.deep.include({ priority: 7, status: 'away', statustext: 'BB' });
    });

    it('makes a session that sent no presence available (initial presence: the contact is probed) and can make it unavailable', async () => {
      const bob = await connect('bob', 'watch', { presence: presence('chat', 'bob here', 0) });
      const laptop = await connect('alice', 'laptop');
      // As with a client's initial presence, alice's session receives the presence of the contacts she is subscribed to.
      const probed = next(laptop, (s) => s.is('presence') && s.attrs.from === 'bob@localhost/watch' && s.attrs.type === undefined);
      expect(await ok('set_presence', { user: 'alice', host: 'localhost', resource: 'laptop', type: 'available', show: '', status: '', priority: 0 })).to.equal(0);
      expect((await probed).getChildText('status')).to.equal('bob here');
      expect(await ok('get_presence', { user: 'alice', host: 'localhost' })).to.deep.equal({ jid: 'alice@localhost/laptop', show: 'available', status: '' });
      const offline = next(bob, (s) => s.is('presence') && s.attrs.from === 'alice@localhost/laptop' && s.attrs.type === 'unavailable');
      expect(await ok('set_presence', { user: 'alice', host: 'localhost', resource: 'laptop', type: 'unavailable', show: '', status: 'back soon', priority: 0 })).to.equal(0);
      expect((await offline).getChildText('status')).to.equal('back soon');
      expect(await ok('get_presence', { user: 'alice', host: 'localhost' })).to.deep.equal({ jid: 'alice@localhost', show: 'unavailable', status: '' });
      expect(await ok('user_resources', { user: 'alice', host: 'localhost' })).to.deep.equal(['laptop']);
    });

    it('API version 0 takes the priority as a string', async () => {
      await connect('alice', 'laptop');
      expect(await ok('set_presence', { user: 'alice', host: 'localhost', resource: 'laptop', type: 'available', show: 'xa', status: '', priority: '-5' }, '/api/v0')).to.equal(0);
      const [info] = await ok('user_sessions_info', { user: 'alice', host: 'localhost' });
      expect(info).to.deep.include({ priority: -5, status: 'xa' });
      const bad = await api('set_presence', { user: 'alice', host: 'localhost', resource: 'laptop', type: 'available', show: 'xa', status: '', priority: 'high' }, '/api/v0');
      expect(bad.status).to.equal(400);
      expect(bad.body.message).to.equal("priority must be an integer from -128 to 127, got 'high'");
    });

    it('refuses a bad type, show or priority, or a session that is not connected, sending nothing', async () => {
      const bob = await connect('bob', 'watch', { presence: presence(undefined, undefined, 0) });
      const laptop = await connect('alice', 'laptop', { presence: presence('dnd', 'busy', 2) });
      // Let the login's own presence traffic (broadcast, probe answers) settle first.
      await pause(200);
      const fromLaptop = (s: Element) => s.is('presence') && s.attrs.from === 'alice@localhost/laptop';
      const seenByBob = expectSilence(bob, fromLaptop, 'presence bob heard from a refused set_presence');
      const seenByAlice = expectSilence(laptop, fromLaptop, 'presence alice heard from a refused set_presence');
      const base = { user: 'alice', host: 'localhost', resource: 'laptop', type: 'available', show: 'away', status: 'x', priority: 1 };
      const cases: Array<[Record<string, unknown>, number, RegExp]> = [
        [{ type: 'subscribe' }, 400, /^type must be available or unavailable, got 'subscribe'/],
        [{ type: 'probe' }, 400, /^type must be available or unavailable/],
        [{ show: 'sleeping' }, 400, /^show must be one of chat, away, dnd, xa, or available or empty for none; got 'sleeping'$/],
        [{ priority: 128 }, 400, /^priority must be an integer from -128 to 127, got 128$/],
        [{ priority: -129 }, 400, /^priority must be an integer from -128 to 127, got -129$/],
        [{ priority: '1.5' }, 400, /'priority'/],
        [{ resource: 'tablet' }, 404, /^alice@localhost has no session with resource 'tablet'$/],
        [{ user: 'nobody' }, 404, /^account nobody@localhost does not exist$/],
      ];
      for (const [change, status, message] of cases) {
        const res = await api('set_presence', { ...base, ...change });
        expect(res.status, JSON.stringify(change)).to.equal(status);
        expect(res.body.message, JSON.stringify(change)).to.match(message);
      }
      expect(await ok('get_presence', { user: 'alice', host: 'localhost' })).to.deep.equal({ jid: 'alice@localhost/laptop', show: 'dnd', status: 'busy' });
      // Both hear the presence of a set_presence that is not refused, sent once for the two proofs.
      let sent: Promise<unknown> | undefined;
      const valid = () => (sent ??= ok('set_presence', { ...base, status: 'valid' }));
      const heard = (s: Element) => fromLaptop(s) && s.getChildText('status') === 'valid';
      await Promise.all([seenByBob.proveWith(valid, heard), seenByAlice.proveWith(valid, heard)]);
    });
  });

  describe('status_list, status_list_host, status_num, status_num_host', () => {
    beforeEach(async () => {
      await connect('alice', 'laptop', { presence: presence('dnd', 'meeting', 5) });
      await connect('alice', 'phone', { transport: 'ws', presence: presence('dnd', '', -2) });
      await connect('bob', 'desk', { presence: presence('away', 'lunch', 0) });
      await connect('carol', 'idle');
      await connect('dave', 'tablet', { transport: 'ws', host: 'example.com', presence: presence('dnd', 'on call', 1) });
    });

    it('status_list (v3) lists the sessions with that show on every vhost, with priority and status text', async () => {
      expect(await ok('status_list', { status: 'dnd' })).to.deep.equal([
        { jid: 'alice@localhost/laptop', priority: 5, status: 'meeting' },
        { jid: 'alice@localhost/phone', priority: -2, status: '' },
        { jid: 'dave@example.com/tablet', priority: 1, status: 'on call' },
      ]);
      expect(await ok('status_list', { status: 'away' })).to.deep.equal([{ jid: 'bob@localhost/desk', priority: 0, status: 'lunch' }]);
      expect(await ok('status_list', { status: 'unavailable' })).to.deep.equal([{ jid: 'carol@localhost/idle', priority: 0, status: '' }]);
      expect(await ok('status_list', { status: 'xa' })).to.deep.equal([]);
    });

    it('status_list_host keeps one vhost; API version 0 gives user, host and resource', async () => {
      expect(await ok('status_list_host', { host: 'localhost', status: 'dnd' })).to.deep.equal([
        { jid: 'alice@localhost/laptop', priority: 5, status: 'meeting' },
        { jid: 'alice@localhost/phone', priority: -2, status: '' },
      ]);
      expect(await ok('status_list_host', { host: 'example.com', status: 'dnd' }, '/api/v0')).to.deep.equal([{ user: 'dave', host: 'example.com', resource: 'tablet', priority: 1, status: 'on call' }]);
      expect(await ok('status_list', { status: 'away' }, '/api/v2')).to.deep.equal([{ user: 'bob', host: 'localhost', resource: 'desk', priority: 0, status: 'lunch' }]);
    });

    it('status_num and status_num_host count sessions', async () => {
      expect(await ok('status_num', { status: 'dnd' })).to.equal(3);
      expect(await ok('status_num_host', { host: 'localhost', status: 'dnd' })).to.equal(2);
      expect(await ok('status_num_host', { host: 'example.com', status: 'away' })).to.equal(0);
      expect(await ok('status_num', { status: 'unavailable' })).to.equal(1);
    });

    it('refuses a status that is no presence, and a host not served', async () => {
      for (const [command, args] of [
        ['status_list', { status: 'busy' }],
        ['status_list_host', { host: 'localhost', status: 'online' }],
        ['status_num', { status: 'DND' }],
        ['status_num_host', { host: 'localhost', status: '' }],
      ] as const) {
        const res = await api(command, args);
        expect(res.status, command).to.equal(400);
        expect(res.body.message, command).to.match(/^status must be one of available, chat, away, dnd, xa, unavailable, got '/);
      }
      for (const command of ['status_list_host', 'status_num_host']) {
        const res = await api(command, { host: 'elsewhere.org', status: 'dnd' });
        expect(res.status, command).to.equal(400);
        expect(res.body.message).to.match(/unknown virtual host/);
      }
    });
  });

  describe('through servicectl and XML-RPC', () => {
    it('servicectl runs them with positional arguments', async () => {
      await connect('alice', 'laptop', { presence: presence('dnd', 'meeting', 5) });
      await connect('alice', 'phone', { transport: 'ws' });
      const ctl = (...args: string[]) => servicectl(t.configFile, ...args);
      const vhost = await ctl('connected_users_vhost', 'localhost');
      expect(vhost, vhost.stderr).to.deep.include({ code: 0, stdout: 'alice@localhost/laptop\nalice@localhost/phone\n' });
      expect((await ctl('num_resources', 'alice', 'localhost')).stdout).to.equal('2\n');
      const set = await ctl('set_presence', 'alice', 'localhost', 'phone', 'available', 'chat', 'hello there', '9');
      expect(set, set.stderr).to.deep.include({ code: 0, stdout: '' });
      expect(await ok('get_presence', { user: 'alice', host: 'localhost' })).to.deep.equal({ jid: 'alice@localhost/phone', show: 'chat', status: 'hello there' });
      const json = await ctl('--json', 'user_sessions_info', 'alice', 'localhost');
      expect(JSON.parse(json.stdout).map((s: any) => [s.resource, s.status, s.priority])).to.deep.equal([
        ['laptop', 'dnd', 5],
        ['phone', 'chat', 9],
      ]);
      const kicked = await ctl('kick_session', 'alice', 'localhost', 'phone', 'bye');
      expect(kicked.code, kicked.stderr).to.equal(0);
      await waitResources('alice', ['laptop']);
      const missing = await ctl('kick_session', 'alice', 'localhost', 'phone', 'bye');
      expect(missing.code).to.not.equal(0);
      expect(missing.stderr).to.include("alice@localhost has no session with resource 'phone'");
    });

    it('XML-RPC answers them in the administrator call form', async () => {
      await connect('alice', 'laptop', { presence: presence('away', 'out', 3) });
      const call = async (method: string, args: Record<string, string | number>) => {
        const encode = (v: string | number) => (typeof v === 'number' ? `<int>${v}</int>` : `<string>${v}</string>`);
        const struct = (o: Record<string, string | number | boolean>) =>
          `<value><struct>${Object.entries(o).map(([k, v]) => `<member><name>${k}</name><value>${typeof v === 'boolean' ? `<boolean>${v ? 1 : 0}</boolean>` : encode(v)}</value></member>`).join('')}</struct></value>`;
        const body = `<?xml version="1.0"?><methodCall><methodName>${method}</methodName><params><param>${struct({ user: 'admin', server: 'localhost', password: 'adminpass', admin: true })}</param><param>${struct(args)}</param></params></methodCall>`;
        return (await request(xmlrpcUrl, { method: 'POST', headers: { 'content-type': 'text/xml' }, body })).text;
      };
      const presenceAnswer = await call('get_presence', { user: 'alice', host: 'localhost' });
      expect(presenceAnswer).to.include('<name>presence</name>');
      for (const [name, value] of [['jid', 'alice@localhost/laptop'], ['show', 'away'], ['status', 'out']]) {
        expect(presenceAnswer).to.include(`<member><name>${name}</name><value><string>${value}</string></value></member>`);
      }
      const count = await call('num_resources', { user: 'alice', host: 'localhost' });
      expect(count).to.include('<member><name>resources</name><value><int>1</int></value></member>');
      const fault = await call('resource_num', { user: 'alice', host: 'localhost', num: 4 });
      expect(fault).to.include('<name>faultCode</name><value><int>41</int></value>');
      expect(fault).to.include('num must be between 1 and 1');
    });
  });
});
