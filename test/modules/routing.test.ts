/**
 * The routing port: a module registers a route to domains the server does not serve (another server over
 * s2s, a cluster peer), and the router tries it before refusing with remote-server-not-found.
 */
import { expect } from 'chai';
import { TestServer } from '../support/server.js';
import { login, next, stopAll, xml, xmppConfig, type Client } from '../support/xmpp.js';

describe('remote routes from modules', () => {
  let t: TestServer;
  let alice: Client | undefined;

  before(async () => {
    t = await TestServer.start(xmppConfig({ mod_fixture_route: {} }), { plugins: ['mod_fixture_route'] });
    await t.server.services.accounts.register('alice', 'localhost', 'alice-pw');
    alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'r' });
  });
  after(async () => {
    await stopAll(alice);
    await t.stop();
  });

  it('hands a stanza for a domain not served here to the route that reaches it', async () => {
    const echo = next(alice!, (s) => s.is('message') && s.attrs.from === 'bob@remote.example');
    await alice!.send(xml('message', { to: 'bob@remote.example', type: 'chat' }, xml('body', {}, 'hello')));
    expect((await echo).getChildText('body')).to.equal('echo: hello');
  });

  it('refuses what no route reaches with remote-server-not-found', async () => {
    const error = next(alice!, (s) => s.is('message') && s.attrs.type === 'error');
    await alice!.send(xml('message', { to: 'bob@elsewhere.example', type: 'chat' }, xml('body', {}, 'lost')));
    const stanza = await error;
    expect(stanza.getChild('error')?.getChild('remote-server-not-found')).to.not.equal(undefined);
    expect(stanza.getChild('error')?.getChildText('text')).to.equal('elsewhere.example is not served here, and no route reaches it');
  });
});
