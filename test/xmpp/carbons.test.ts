/**
 * Message carbons (XEP-0280) with real clients: two resources of alice enable carbons; what one receives
 * or sends reaches the other wrapped in <received/> or <sent/>; <private/>, <no-copy/> and ineligible
 * messages are not copied; a session without carbons gets nothing.
 */
import { expect } from 'chai';
import { TestServer } from '../support/server.js';
import { expectSilence, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

const CARBONS = 'urn:xmpp:carbons:2';
const FORWARD = 'urn:xmpp:forward:0';

function carbon(stanza: Element, direction: 'received' | 'sent'): Element | undefined {
  return stanza.getChild(direction, CARBONS)?.getChild('forwarded', FORWARD)?.getChild('message', 'jabber:client');
}

/** A chat message to `to` with `body`. */
function chat(to: string, body: string): Element {
  return xml('message', { to, type: 'chat' }, xml('body', {}, body));
}

const withBody = (body: string) => (s: Element) => s.is('message') && s.getChildText('body') === body;
/** A carbon copy (either direction) of a message with `body`. */
const copyOf = (body: string) => (s: Element) => s.is('message') && (carbon(s, 'received') ?? carbon(s, 'sent'))?.getChildText('body') === body;

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
    const atPlain = expectSilence(a3, (s) => s.is('message'), 'the message or a copy at the resource without carbons');
    await bob.send(xml('message', { to: 'alice@localhost/one', type: 'chat', id: 'r1' }, xml('body', {}, 'hi one')));
    await original;
    const wrapper = await copy;
    expect(wrapper.attrs.from).to.equal('alice@localhost');
    expect(wrapper.attrs.to).to.equal('alice@localhost/two');
    expect(wrapper.attrs.type).to.equal('chat');
    const forwarded = carbon(wrapper, 'received')!;
    expect(forwarded.attrs).to.include({ from: 'bob@localhost/b', to: 'alice@localhost/one', id: 'r1' });
    expect(forwarded.getChildText('body')).to.equal('hi one');
    // The resource without carbons gets neither the message nor a copy; bob's next message to it does arrive.
    await atPlain.proveWith(() => bob.send(chat('alice@localhost/plain', 'probe plain')), withBody('probe plain'));
  });

  it('copies a message sent by one resource to the other as <sent/>', async () => {
    const copy = next(a2, (s) => s.is('message') && carbon(s, 'sent') !== undefined);
    const atBob = next(bob, (s) => s.is('message') && s.getChildText('body') === 'hi bob');
    const atSender = expectSilence(a1, (s) => carbon(s, 'sent') !== undefined, 'a <sent/> copy at the sending resource');
    await a1.send(xml('message', { to: 'bob@localhost/b', type: 'chat', id: 's1' }, xml('body', {}, 'hi bob')));
    await atBob;
    const wrapper = await copy;
    expect(wrapper.attrs).to.include({ from: 'alice@localhost', to: 'alice@localhost/two', type: 'chat' });
    const forwarded = carbon(wrapper, 'sent')!;
    expect(forwarded.attrs).to.include({ from: 'alice@localhost/one', to: 'bob@localhost/b', id: 's1' });
    expect(forwarded.getChildText('body')).to.equal('hi bob');
    // Not to the sending resource itself, which does get the copy of what its sibling sends next.
    await atSender.proveWith(() => a2.send(chat('bob@localhost/b', 'probe sent')), copyOf('probe sent'));
  });

  it('copies nothing of a <private/> message, and strips <private/> before delivery', async () => {
    const atTwo = expectSilence(a2, (s) => s.is('message'), 'a copy of a <private/> message');
    const outbound = next(bob, (s) => s.is('message') && s.getChildText('body') === 'secret out');
    await a1.send(xml('message', { to: 'bob@localhost/b', type: 'chat' }, xml('body', {}, 'secret out'), xml('private', { xmlns: CARBONS })));
    await outbound;
    const inbound = next(a1, (s) => s.is('message') && s.getChildText('body') === 'secret in');
    await bob.send(xml('message', { to: 'alice@localhost/one', type: 'chat' }, xml('body', {}, 'secret in'), xml('private', { xmlns: CARBONS })));
    expect((await inbound).getChild('private', CARBONS)).to.equal(undefined);
    // The same message without <private/> is copied.
    await atTwo.proveWith(() => bob.send(chat('alice@localhost/one', 'probe private')), copyOf('probe private'));
  });

  it('copies nothing of <no-copy/>, headline, groupchat or bodyless normal messages', async () => {
    const atTwo = expectSilence(a2, (s) => s.is('message'), 'a copy of a message that is not copied');
    await bob.send(xml('message', { to: 'alice@localhost/one', type: 'chat' }, xml('body', {}, 'hint'), xml('no-copy', { xmlns: 'urn:xmpp:hints' })));
    await bob.send(xml('message', { to: 'alice@localhost/one', type: 'headline' }, xml('body', {}, 'news')));
    await bob.send(xml('message', { to: 'alice@localhost/one' }, xml('subject', {}, 'no body')));
    const group = next(bob, withBody('group'));
    await a1.send(xml('message', { to: 'bob@localhost/b', type: 'groupchat' }, xml('body', {}, 'group')));
    // Handled (delivered) before the probe below, which comes from another stream.
    await group;
    // A normal message with a body is copied, and arrives after any copy of those before it.
    const copy = await atTwo.proveWith(() => bob.send(xml('message', { to: 'alice@localhost/one', type: 'normal' }, xml('body', {}, 'marker'))), copyOf('marker'));
    expect(carbon(copy, 'received')).to.not.equal(undefined);
  });

  it('does not copy to a resource that disabled carbons', async () => {
    await a2.iqCaller.request(xml('iq', { type: 'set' }, xml('disable', { xmlns: CARBONS })));
    const atTwo = expectSilence(a2, (s) => s.is('message'), 'a copy at the resource that disabled carbons');
    try {
      const delivered = next(a1, (s) => s.is('message') && s.getChildText('body') === 'after disable');
      await bob.send(xml('message', { to: 'alice@localhost/one', type: 'chat' }, xml('body', {}, 'after disable')));
      await delivered;
    } finally {
      await a2.iqCaller.request(xml('iq', { type: 'set' }, xml('enable', { xmlns: CARBONS })));
    }
    // Enabled again, the next message is copied.
    await atTwo.proveWith(() => bob.send(chat('alice@localhost/one', 'after enable')), copyOf('after enable'));
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
