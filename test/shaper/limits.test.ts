/**
 * Hard limits on the real server over real sockets: ejabberd's max_user_sessions rule (shaper_rules, by ACL)
 * refuses a resource bound beyond it with the policy-violation stream error and leaves the earlier sessions
 * alone; the listener option max_connection_rate refuses an address that opens connections too fast (the
 * stream error on c2s, 429 on a WebSocket upgrade), while plain HTTP requests and other addresses' limits
 * are untouched.
 */
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { TestServer } from '../support/server.js';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { login, next, stopAll, xml, xmppConfig, type Client } from '../support/xmpp.js';

/** A raw client that authenticates and asks to bind `resource`: the bound JID, or the stream error it got. */
async function tryBind(port: number, user: string, password: string, resource: string): Promise<{ peer: RawXmppPeer; jid?: string; error?: { condition: string; text?: string } }> {
  const peer = await RawXmppPeer.connect(port);
  await peer.authenticate(user, password);
  peer.write(`<iq type='set' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>${resource}</resource></bind></iq>`);
  const outcome = await peer.waitFor(/<jid>([^<]+)<\/jid>|<\/stream:error>/, 10_000);
  if (outcome[1]) return { peer, jid: outcome[1] };
  const error = await peer.streamError();
  return { peer, error: { condition: error.condition, text: error.text } };
}

async function chat(from: Client, to: Client): Promise<void> {
  const body = `hello ${Math.random()}`;
  const arrived = next(to, (s) => s.is('message') && s.getChildText('body') === body);
  await from.send(xml('message', { to: to.jid!.toString(), type: 'chat' }, xml('body', {}, body)));
  await arrived;
}

describe('max_user_sessions (shaper_rules)', function () {
  this.timeout(60_000);
  let t: TestServer;
  let port: number;
  const clients: Client[] = [];
  const peers: RawXmppPeer[] = [];

  before(async () => {
    const config = xmppConfig();
    // A list keeps its order in the YAML this writes (an object would put 2 before 3; a file's map keeps its order).
    config.shaper_rules = { max_user_sessions: [{ 3: 'admin' }, { 2: 'all' }] };
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    await t.register('alice', 'localhost', 'alicepass');
    port = t.server.portOf('service_c2s')!;
  });

  afterEach(async () => {
    await stopAll(...clients.splice(0));
    for (const peer of peers.splice(0)) peer.destroy();
  });

  after(async () => {
    await t?.stop();
  });

  it('refuses the session beyond the limit with policy-violation, and the earlier ones stay', async () => {
    const one = await login(t, { user: 'alice', password: 'alicepass', resource: 'one' });
    const two = await login(t, { user: 'alice', password: 'alicepass', resource: 'two', transport: 'ws' });
    clients.push(one, two);
    const third = await tryBind(port, 'alice', 'alicepass', 'three');
    peers.push(third.peer);
    expect(third.jid, 'a third session of alice').to.equal(undefined);
    expect(third.error).to.deep.equal({ condition: 'policy-violation', text: 'too many sessions: alice@localhost may have 2 at once (max_user_sessions)' });
    await third.peer.waitClosed();
    expect((await t.server.services.xmpp.sessions.byAccount('alice@localhost')).map((s) => s.resource).sort()).to.deep.equal(['one', 'two']);
    // Both earlier sessions are untouched and still talk to each other.
    await chat(one, two);
    await chat(two, one);
    expect(t.logs.some((l) => l.msg?.includes('session refused: too many sessions: alice@localhost'))).to.equal(true);
  });

  it('still lets a bind replace a session of the same resource at the limit, and counts a session that ended out', async () => {
    const one = await login(t, { user: 'alice', password: 'alicepass', resource: 'one' });
    const two = await login(t, { user: 'alice', password: 'alicepass', resource: 'two' });
    clients.push(two);
    const replaced = new Promise<string>((resolve) => one.on('error', (err: { condition?: string }) => resolve(String(err.condition))));
    const again = await tryBind(port, 'alice', 'alicepass', 'one');
    peers.push(again.peer);
    expect(again.jid).to.equal('alice@localhost/one');
    expect(await replaced, 'the older session of the same resource').to.equal('conflict');
    await stopAll(one);
    // Two sessions (two, and the new one): a third is refused until one of them ends.
    const refused = await tryBind(port, 'alice', 'alicepass', 'three');
    peers.push(refused.peer);
    expect(refused.error?.condition).to.equal('policy-violation');
    again.peer.destroy();
    await again.peer.waitClosed();
    let third: Awaited<ReturnType<typeof tryBind>> | undefined;
    for (let i = 0; i < 50 && !third?.jid; i++) {
      if (third) await new Promise((resolve) => setTimeout(resolve, 100));
      third = await tryBind(port, 'alice', 'alicepass', 'three');
      peers.push(third.peer);
    }
    expect(third?.jid).to.equal('alice@localhost/three');
  });

  it('gives the admin ACL its own limit', async () => {
    for (const resource of ['a', 'b', 'c']) clients.push(await login(t, { user: 'admin', password: 'adminpass', resource }));
    const fourth = await tryBind(port, 'admin', 'adminpass', 'd');
    peers.push(fourth.peer);
    expect(fourth.error).to.deep.equal({ condition: 'policy-violation', text: 'too many sessions: admin@localhost may have 3 at once (max_user_sessions)' });
  });
});

describe('max_connection_rate (listener option)', function () {
  this.timeout(60_000);
  let t: TestServer;
  const peers: RawXmppPeer[] = [];

  before(async () => {
    const config = xmppConfig();
    const listen = config.listen as Array<Record<string, unknown>>;
    listen[0]!.max_connection_rate = 2;
    listen[1]!.max_connection_rate = 3;
    t = await TestServer.start(config);
  });

  after(async () => {
    for (const peer of peers.splice(0)) peer.destroy();
    await t?.stop();
  });

  it('refuses the connection beyond the rate with policy-violation; the earlier ones go on', async () => {
    const port = t.server.portOf('service_c2s')!;
    for (let i = 0; i < 3; i++) {
      const peer = await RawXmppPeer.connect(port);
      peers.push(peer);
      expect(await peer.open(), `connection ${i + 1}`).to.match(/<starttls\b/);
    }
    const fourth = await RawXmppPeer.connect(port);
    peers.push(fourth);
    const error = await fourth.streamError();
    expect(error.condition).to.equal('policy-violation');
    expect(error.text).to.equal('too many connections from your address: at most 3 a minute (max_connection_rate)');
    await fourth.waitClosed();
    // The three admitted connections are still open and served.
    for (const peer of peers.slice(0, 3)) {
      expect(peer.isClosed).to.equal(false);
      await peer.startTls();
    }
  });

  it('answers a WebSocket upgrade beyond the rate with 429, and leaves plain HTTP requests alone', async () => {
    const upgrade = () =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${t.port}/websocket`, 'xmpp');
        ws.once('open', () => {
          ws.close();
          resolve(101);
        });
        ws.once('unexpected-response', (_request, response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
          ws.terminate();
        });
        ws.once('error', reject);
      });
    expect([await upgrade(), await upgrade(), await upgrade()]).to.deep.equal([101, 101, 429]);
    for (let i = 0; i < 5; i++) expect((await t.api('status', {}, { method: 'GET' })).status).to.equal(200);
  });
});
