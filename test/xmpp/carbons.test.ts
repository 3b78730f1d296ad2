/**
 * Message carbons (XEP-0280) with real clients: two resources of alice enable carbons; what one receives
 * or sends reaches the other wrapped in <received/> or <sent/>; <private/>, <no-copy/> and ineligible
 * messages are not copied; a session without carbons gets nothing.
 */
import { expect } from 'chai';
import { TestServer } from '../support/server.js';
import { collect, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

const CARBONS = 'urn:xmpp:carbons:2';
const FORWARD = 'urn:xmpp:forward:0';

function carbon(stanza: Element, direction: 'received' | 'sent'): Element | undefined {
  return stanza.getChild(direction, CARBONS)?.getChild('forwarded', FORWARD)?.getChild('message', 'jabber:client');
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

describe('XMPP message carbons', () => {
  let t: TestServer;
  let a1: Client;
  let a2: Client;
  let a3: Client;
  let bob: Client;

  before(async () => {
    t = await TestServer.start(xmppConfig({ mod_carboncopy: {}, mod_disco: {} }));
    const accounts = t.server.services.accounts;
    await accounts.register('alice', 'localhost', 'alice-pw');
    await accounts.register('bob', 'localhost', 'bob-pw');
    a1 = await login(t, { user: 'alice', password: 'alice-pw', resource: 'one' });
    a2 = await login(t, { user: 'alice', password: 'alice-pw', resource: 'two', transport: 'ws' });
    a3 = await login(t, { user: 'alice', password: 'alice-pw', resource: 'plain' });
    bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b' });
    for (const client of [a1, a2, a3, bob]) await client.send(xml('presence'));
    for (const client of [a1, a2]) {
      const result = await client.iqCaller.request(xml('iq', { type: 'set' }, xml('enable', { xmlns: CARBONS })));
      expect(result.attrs.type).to.equal('result');
    }
  });
  after(async () => {
    await stopAll(a1, a2, a3, bob);
    await t.stop();
  });

  it('copies a message received by one resource to the other as <received/>', async () => {
    const copy = next(a2, (s) => s.is('message') && carbon(s, 'received') !== undefined);
    const original = next(a1, (s) => s.is('message') && s.getChildText('body') === 'hi one');
    const atPlain = collect(a3);
    await bob.send(xml('message', { to: 'alice@localhost/one', type: 'chat', id: 'r1' }, xml('body', {}, 'hi one')));
    await original;
    const wrapper = await copy;
    expect(wrapper.attrs.from).to.equal('alice@localhost');
    expect(wrapper.attrs.to).to.equal('alice@localhost/two');
    expect(wrapper.attrs.type).to.equal('chat');
    const forwarded = carbon(wrapper, 'received')!;
    expect(forwarded.attrs).to.include({ from: 'bob@localhost/b', to: 'alice@localhost/one', id: 'r1' });
    expect(forwarded.getChildText('body')).to.equal('hi one');
    await settle();
    // The resource without carbons gets neither the message nor a copy.
    expect(atPlain.filter((s) => s.is('message'))).to.have.length(0);
  });

  it('copies a message sent by one resource to the other as <sent/>', async () => {
    const copy = next(a2, (s) => s.is('message') && carbon(s, 'sent') !== undefined);
    const atBob = next(bob, (s) => s.is('message') && s.getChildText('body') === 'hi bob');
    const atSender = collect(a1);
    await a1.send(xml('message', { to: 'bob@localhost/b', type: 'chat', id: 's1' }, xml('body', {}, 'hi bob')));
    await atBob;
    const wrapper = await copy;
    expect(wrapper.attrs).to.include({ from: 'alice@localhost', to: 'alice@localhost/two', type: 'chat' });
    const forwarded = carbon(wrapper, 'sent')!;
    expect(forwarded.attrs).to.include({ from: 'alice@localhost/one', to: 'bob@localhost/b', id: 's1' });
    expect(forwarded.getChildText('body')).to.equal('hi bob');
    await settle();
    // Not to the sending resource itself.
    expect(atSender.filter((s) => carbon(s, 'sent') !== undefined)).to.have.length(0);
  });

  it('copies nothing of a <private/> message, and strips <private/> before delivery', async () => {
    const atTwo = collect(a2);
    const outbound = next(bob, (s) => s.is('message') && s.getChildText('body') === 'secret out');
    await a1.send(xml('message', { to: 'bob@localhost/b', type: 'chat' }, xml('body', {}, 'secret out'), xml('private', { xmlns: CARBONS })));
    await outbound;
    const inbound = next(a1, (s) => s.is('message') && s.getChildText('body') === 'secret in');
    await bob.send(xml('message', { to: 'alice@localhost/one', type: 'chat' }, xml('body', {}, 'secret in'), xml('private', { xmlns: CARBONS })));
    expect((await inbound).getChild('private', CARBONS)).to.equal(undefined);
    await settle();
    expect(atTwo.filter((s) => s.is('message'))).to.have.length(0);
  });

  it('copies nothing of <no-copy/>, headline, groupchat or bodyless normal messages', async () => {
    const atTwo = collect(a2);
    const last = next(a1, (s) => s.is('message') && s.getChildText('body') === 'marker');
    await bob.send(xml('message', { to: 'alice@localhost/one', type: 'chat' }, xml('body', {}, 'hint'), xml('no-copy', { xmlns: 'urn:xmpp:hints' })));
    await bob.send(xml('message', { to: 'alice@localhost/one', type: 'headline' }, xml('body', {}, 'news')));
    await bob.send(xml('message', { to: 'alice@localhost/one' }, xml('subject', {}, 'no body')));
    await a1.send(xml('message', { to: 'bob@localhost/b', type: 'groupchat' }, xml('body', {}, 'group')));
    await bob.send(xml('message', { to: 'alice@localhost/one', type: 'normal' }, xml('body', {}, 'marker')));
    await last;
    await settle();
    const copies = atTwo.filter((s) => s.is('message'));
    // Only the last one, a normal message with a body, is copied.
    expect(copies).to.have.length(1);
    expect(carbon(copies[0]!, 'received')!.getChildText('body')).to.equal('marker');
  });

  it('does not copy to a resource that disabled carbons', async () => {
    await a2.iqCaller.request(xml('iq', { type: 'set' }, xml('disable', { xmlns: CARBONS })));
    try {
      const atTwo = collect(a2);
      const delivered = next(a1, (s) => s.is('message') && s.getChildText('body') === 'after disable');
      await bob.send(xml('message', { to: 'alice@localhost/one', type: 'chat' }, xml('body', {}, 'after disable')));
      await delivered;
      await settle();
      expect(atTwo.filter((s) => s.is('message'))).to.have.length(0);
    } finally {
      await a2.iqCaller.request(xml('iq', { type: 'set' }, xml('enable', { xmlns: CARBONS })));
    }
  });

  it('refuses to enable carbons for another account with <not-allowed/>', async () => {
    try {
      await bob.iqCaller.request(xml('iq', { type: 'set', to: 'alice@localhost' }, xml('enable', { xmlns: CARBONS })));
      expect.fail('enabled');
    } catch (err) {
      expect((err as { condition?: string }).condition).to.equal('not-allowed');
    }
  });

  it('announces urn:xmpp:carbons:2 for the server and for accounts', async () => {
    for (const to of ['localhost', 'alice@localhost']) {
      const result = await a1.iqCaller.request(xml('iq', { type: 'get', to }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' })));
      const vars = result.getChild('query')!.getChildren('feature').map((f) => f.attrs.var);
      expect(vars).to.include(CARBONS);
    }
  });
});
