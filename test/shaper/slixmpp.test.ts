/**
 * A real third-party client under a shaper: slixmpp (Debian python3-slixmpp, driven by the interop matrix's
 * helper script) logs in through a shaped c2s listener, sends a large chat message that the shaper must
 * slow down, and still gets its answer and ends normally: slowed, not cut off.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { CA, ExternalClient, PYTHON, SCRIPTS, debianVersion, killAll } from '../interop/external.js';
import { TestServer } from '../support/server.js';
import { login, next, stopAll, xml, type Client } from '../support/xmpp.js';
import { BURST, RATE, shapedConfig } from './shaped.js';

/** The largest TLS record: the server handles what it has read before the shaper pauses it, one record at most. */
const RECORD = 16_384;

describe(`slixmpp ${debianVersion('python3-slixmpp')} through a shaped listener`, function () {
  this.timeout(60_000);
  let t: TestServer;
  let peer: Client | undefined;

  before(async () => {
    t = await TestServer.start(shapedConfig());
    await t.bootstrapAdmin();
    await t.register('slix', 'localhost', 'slixpass');
    await t.register('peer', 'localhost', 'peerpass');
  });

  afterEach(async () => {
    await killAll();
    await stopAll(peer);
  });

  after(async () => {
    await t?.stop();
  });

  it('logs in, is slowed to the rate while it sends, and still exchanges messages', async () => {
    peer = await login(t, { user: 'peer', password: 'peerpass', resource: 'peer' });
    // Available, so that a message to the bare JID reaches this resource.
    await peer.send(xml('presence'));
    const size = 60_000;
    const body = 'y'.repeat(size);
    const arrived = next(peer, (s) => s.is('message') && s.getChildText('body') === body, 40_000);
    arrived.catch(() => {});
    const slix = ExternalClient.spawn(
      'slixmpp',
      [PYTHON, join(SCRIPTS, 'slixmpp_client.py'), '--jid', 'slix@localhost/slix', '--password', 'slixpass', '--port', String(t.server.portOf('service_c2s')), '--ca', CA, '--peer', 'peer@localhost', '--send', body, '--wait', '30'],
      { timeoutMs: 50_000 },
    );
    await slix.event('the message sent', (e) => e.event === 'sent', 30_000);
    const sentAt = performance.now();
    let message;
    try {
      message = await arrived;
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${slix.diagnostics()}`);
    }
    const ms = performance.now() - sentAt;
    expect(message.attrs.from).to.equal('slix@localhost/slix');
    // The message is more than a burst: the server read the rest at the rate (its last record is read, and
    // handled, before the pause it costs).
    expect(ms, `${size} bytes from slixmpp took ${Math.round(ms)} ms`).to.be.within(((size - BURST - RECORD) / RATE) * 1000 * 0.8, ((size / RATE) * 1000) * 1.6 + 2000);
    await peer.send(xml('message', { to: 'slix@localhost/slix', type: 'chat' }, xml('body', {}, 'got it')));
    const { code } = await slix.exit(30_000);
    expect(code, slix.diagnostics()).to.equal(0);
    expect(slix.events.filter((e) => e.event === 'received').map((e) => e.body), slix.diagnostics()).to.deep.equal(['got it']);
  });
});
