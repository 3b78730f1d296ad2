/**
 * Traffic shapers (ejabberd's `shaper`, `shaper_rules` and the listener's `shaper` option) on the real server
 * with real clients: a shaped client's throughput, measured from outside as the time its own messages take to
 * come back through the server, is at the shaper's rate (and far above it for an admin, whom the rule leaves
 * unshaped, which also shows the measurement can see more than the rate); the shaper applies from the first
 * byte by address, to TCP and WebSocket, a pause goes on over STARTTLS, and a shaped client is slowed, never
 * cut off. reload_config gives new connections the new rules.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { TestServer } from '../support/server.js';
import { login, stopAll, type Client, type Transport } from '../support/xmpp.js';
import { RawXmppPeer, streamHeader } from '../support/raw-xmpp.js';
import { BURST, RATE, echoThroughServer, shapedBounds, shapedConfig } from './shaped.js';

async function until(test: () => boolean, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!test()) {
    if (performance.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('traffic shapers (shaper, shaper_rules, listener shaper)', function () {
  this.timeout(90_000);
  let t: TestServer;
  const clients: Client[] = [];

  before(async () => {
    t = await TestServer.start(shapedConfig());
    await t.bootstrapAdmin();
    await t.register('alice', 'localhost', 'alicepass');
  });

  afterEach(async () => {
    await stopAll(...clients.splice(0));
  });

  after(async () => {
    await t?.stop();
  });

  for (const transport of ['tcp', 'ws'] as Transport[]) {
    it(`holds a shaped client to its rate and leaves the admin unshaped (${transport})`, async () => {
      const alice = await login(t, { user: 'alice', password: 'alicepass', transport, resource: 'shaped' });
      clients.push(alice);
      const shaped = await echoThroughServer(alice);
      const { min, max } = shapedBounds(shaped.bytes);
      expect(shaped.ms, `alice's ${shaped.bytes} bytes took ${Math.round(shaped.ms)} ms`).to.be.within(min, max);
      // The rate measured past the burst is the shaper's (not above it).
      const rate = ((shaped.bytes - BURST) * 1000) / shaped.ms;
      expect(rate, 'bytes per second past the burst').to.be.at.most(RATE * 1.15);

      const admin = await login(t, { user: 'admin', password: 'adminpass', transport, resource: 'unshaped' });
      clients.push(admin);
      const unshaped = await echoThroughServer(admin);
      expect(unshaped.ms, `the admin's ${unshaped.bytes} bytes took ${Math.round(unshaped.ms)} ms`).to.be.below(min * 0.3);

      // Slowed, not cut off: alice's stream is still there, and her messages still go through.
      expect((await echoThroughServer(alice, 500)).bytes).to.be.above(0);
    });
  }

  it('shapes a connection from its first byte, by address, before authentication', async () => {
    const peer = await RawXmppPeer.connect(t.server.portOf('service_c2s')!);
    try {
      await peer.open();
      // Whitespace between elements is allowed (keepalives): 25 kB of it, then STARTTLS and TLS on the paused socket.
      const padding = 25_000;
      const start = performance.now();
      peer.write(' '.repeat(padding));
      await peer.startTls({ timeoutMs: 20_000 });
      const ms = performance.now() - start;
      expect(ms, `${padding} bytes before <starttls/> took ${Math.round(ms)} ms`).to.be.within(((padding - BURST) / RATE) * 1000 * 0.85, (padding / RATE) * 1000 * 1.6 + 1500);
      expect(await peer.open(), 'the stream over TLS').to.match(/<mechanisms\b/);
      expect(peer.isClosed).to.equal(false);
    } finally {
      peer.destroy();
    }
  });

  it('carries a pause over STARTTLS: the TLS handshake completes, the stream waits out the pause', async () => {
    const socket = netConnect({ port: t.server.portOf('service_c2s')!, host: '127.0.0.1' });
    await once(socket, 'connect');
    let plain = '';
    socket.on('data', (chunk: Buffer) => (plain += chunk.toString()));
    try {
      socket.write(streamHeader());
      await until(() => plain.includes('</stream:features>'));
      // <starttls/> in the same write as the padding: the server reads both, answers, then pauses.
      const padding = 25_000;
      const start = performance.now();
      socket.write(`${' '.repeat(padding)}<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>`);
      await until(() => plain.includes('<proceed'));
      socket.removeAllListeners('data');
      const secure = tlsConnect({ socket, servername: 'localhost' });
      await once(secure, 'secureConnect');
      const handshake = performance.now() - start;
      let text = '';
      secure.on('data', (chunk: Buffer) => (text += chunk.toString()));
      secure.write(streamHeader({ declaration: false }));
      await until(() => text.includes('</stream:features>'), 20_000);
      const ms = performance.now() - start;
      expect(handshake, 'the TLS handshake, during the pause').to.be.below(((padding - BURST) / RATE) * 1000 * 0.5);
      expect(ms, 'the features of the TLS stream, after the pause').to.be.within(((padding - BURST) / RATE) * 1000 * 0.85, (padding / RATE) * 1000 * 1.6 + 1500);
    } finally {
      socket.destroy();
    }
  });

  it('gives new connections the rules a reload_config brings', async () => {
    await t.writeConfig(shapedConfig('none'));
    expect((await t.api('reload_config', {}, { basic: 'admin@localhost:adminpass' })).body).to.equal(0);
    const alice = await login(t, { user: 'alice', password: 'alicepass', resource: 'after-reload' });
    clients.push(alice);
    const unshaped = await echoThroughServer(alice);
    expect(unshaped.ms, `after the reload alice's ${unshaped.bytes} bytes took ${Math.round(unshaped.ms)} ms`).to.be.below(shapedBounds(unshaped.bytes).min * 0.3);

    // And back: `fast` by name for everyone but alice, who gets `normal`.
    await t.writeConfig(shapedConfig([{ normal: { user: 'alice@localhost' } }, 'fast']));
    expect((await t.api('reload_config', {}, { basic: 'admin@localhost:adminpass' })).body).to.equal(0);
    const again = await login(t, { user: 'alice', password: 'alicepass', resource: 'shaped-again' });
    clients.push(again);
    const shaped = await echoThroughServer(again);
    const { min, max } = shapedBounds(shaped.bytes);
    expect(shaped.ms, `alice's ${shaped.bytes} bytes took ${Math.round(shaped.ms)} ms`).to.be.within(min, max);
  });
});
