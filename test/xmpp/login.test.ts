/**
 * Logging in and chatting with real clients: every SASL mechanism, over TCP with STARTTLS and over
 * WebSocket; resource binding and conflicts; kick_user.
 */
import { expect } from 'chai';
import { TestServer } from '../support/server.js';
import { expectSilence, login, next, stopAll, xml, xmppConfig, type Client } from '../support/xmpp.js';

describe('XMPP login and messages', () => {
  let t: TestServer;

  before(async () => {
    t = await TestServer.start(xmppConfig());
    await t.bootstrapAdmin();
    const accounts = t.server.services.accounts;
    await accounts.register('alice', 'localhost', 'alice-pw');
    await accounts.register('bob', 'localhost', 'bob-pw');
  });
  after(() => t.stop());

  for (const mechanism of ['PLAIN', 'SCRAM-SHA-1', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'SCRAM-SHA-1-PLUS', 'SCRAM-SHA-256-PLUS']) {
    it(`logs in with ${mechanism} over TCP+STARTTLS and exchanges messages`, async () => {
      let alice: Client | undefined;
      let bob: Client | undefined;
      try {
        alice = await login(t, { user: 'alice', password: 'alice-pw', mechanism, resource: 'a1' });
        bob = await login(t, { user: 'bob', password: 'bob-pw', mechanism, resource: 'b1' });
        expect(alice.jid?.toString()).to.equal('alice@localhost/a1');
        const received = next(bob, (s) => s.is('message'));
        await alice.send(xml('message', { to: 'bob@localhost/b1', type: 'chat', id: 'm1' }, xml('body', {}, `hello over ${mechanism}`)));
        const message = await received;
        expect(message.attrs.from).to.equal('alice@localhost/a1');
        expect(message.getChildText('body')).to.equal(`hello over ${mechanism}`);
      } finally {
        await stopAll(alice, bob);
      }
    });
  }

  it('refuses a wrong password with <not-authorized/>', async () => {
    try {
      await login(t, { user: 'alice', password: 'nope', mechanism: 'SCRAM-SHA-256' });
      expect.fail('logged in');
    } catch (err) {
      expect((err as { condition?: string }).condition).to.equal('not-authorized');
    }
  });

  it('logs in over WebSocket and chats with a TCP client', async () => {
    let alice: Client | undefined;
    let bob: Client | undefined;
    try {
      alice = await login(t, { user: 'alice', password: 'alice-pw', transport: 'ws', resource: 'web' });
      bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'tcp' });
      const received = next(alice, (s) => s.is('message'));
      await bob.send(xml('message', { to: 'alice@localhost/web', type: 'chat' }, xml('body', {}, 'hi web')));
      expect((await received).getChildText('body')).to.equal('hi web');
    } finally {
      await stopAll(alice, bob);
    }
  });

  it('delivers a message to a bare JID to the available resource with the highest priority', async () => {
    const clients: Client[] = [];
    try {
      const low = await login(t, { user: 'alice', password: 'alice-pw', resource: 'low' });
      const high = await login(t, { user: 'alice', password: 'alice-pw', resource: 'high' });
      const bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b' });
      clients.push(low, high, bob);
      await low.send(xml('presence', {}, xml('priority', {}, '1')));
      await high.send(xml('presence', {}, xml('priority', {}, '5')));
      await new Promise((r) => setTimeout(r, 100));
      const atHigh = next(high, (s) => s.is('message'));
      const atLow = expectSilence(low, (s) => s.is('message'), 'the message at the lower-priority resource');
      await bob.send(xml('message', { to: 'alice@localhost', type: 'chat' }, xml('body', {}, 'to the bare JID')));
      expect((await atHigh).getChildText('body')).to.equal('to the bare JID');
      // bob's next message, to the low resource's full JID, reaches it.
      await atLow.proveWith(() => bob.send(xml('message', { to: 'alice@localhost/low', type: 'chat' }, xml('body', {}, 'to low'))), (s) => s.is('message') && s.getChildText('body') === 'to low');
    } finally {
      await stopAll(...clients);
    }
  });

  it('answers a message to an unknown account with <service-unavailable/>', async () => {
    const bob = await login(t, { user: 'bob', password: 'bob-pw' });
    try {
      const error = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
      await bob.send(xml('message', { to: 'nobody@localhost', type: 'chat', id: 'x1' }, xml('body', {}, 'hello?')));
      const reply = await error;
      expect(reply.attrs.id).to.equal('x1');
      expect(reply.getChild('error')?.getChild('service-unavailable')).to.exist;
    } finally {
      await stopAll(bob);
    }
  });

  it('replaces the older session when a resource is bound twice', async () => {
    const first = await login(t, { user: 'bob', password: 'bob-pw', resource: 'same' });
    const gone = new Promise<string>((resolve) => first.on('error', (err: any) => resolve(err.condition)));
    const second = await login(t, { user: 'bob', password: 'bob-pw', resource: 'same' });
    try {
      expect(await gone).to.equal('conflict');
      const resources = await t.api('user_resources', { user: 'bob', host: 'localhost' }, { basic: 'admin@localhost:adminpass' });
      expect(resources.body).to.deep.equal(['same']);
    } finally {
      await stopAll(first, second);
    }
  });

  it('kick_user disconnects every session with a stream error that says why', async () => {
    const one = await login(t, { user: 'alice', password: 'alice-pw', resource: 'k1' });
    const two = await login(t, { user: 'alice', password: 'alice-pw', resource: 'k2', transport: 'ws' });
    const errors = Promise.all([one, two].map((c) => new Promise<string>((resolve) => c.on('error', (err: any) => resolve(`${err.condition}: ${err.text}`)))));
    const connected = await t.api('connected_users', {}, { basic: 'admin@localhost:adminpass' });
    expect(connected.body).to.include.members(['alice@localhost/k1', 'alice@localhost/k2']);
    const res = await t.api('kick_user', { user: 'alice', host: 'localhost' }, { basic: 'admin@localhost:adminpass' });
    expect(res.body).to.equal('Kicked sessions: 2');
    expect(await errors).to.deep.equal(['policy-violation: Kicked by administrator', 'policy-violation: Kicked by administrator']);
    await stopAll(one, two);
    const v1 = await t.api('kick_user', { user: 'alice', host: 'localhost' }, { basic: 'admin@localhost:adminpass', prefix: '/api/v1' });
    expect(v1.body).to.equal(0);
  });
});
