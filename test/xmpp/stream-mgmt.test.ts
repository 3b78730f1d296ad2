/**
 * Stream management (XEP-0198) with a real client: acknowledgements, resumption after a lost connection
 * with the stanzas sent meanwhile, and unacknowledged messages handed back to routing when a session is
 * not resumed; with a raw peer, the stream error for an acknowledgement of more than was sent. How a
 * session ends in detail is in stream-mgmt-end.test.ts.
 */
import { expect } from 'chai';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { TestServer } from '../support/server.js';
import { login, next, stopAll, xml, xmppConfig, type Client } from '../support/xmpp.js';

/** Cuts the client's connection without a proper close, as a network loss would. */
function cut(client: Client): void {
  (client as any).socket.socket.destroy();
}

/** @xmpp/client enables stream management right after going online; wait for <enabled/>. */
async function smEnabled(client: Client): Promise<{ enabled: boolean; id: string; on(e: string, f: () => void): void }> {
  const sm = (client as any).streamManagement;
  for (let i = 0; i < 50 && !sm.enabled; i++) await new Promise((r) => setTimeout(r, 20));
  return sm;
}

describe('stream management', () => {
  let t: TestServer;

  before(async () => {
    t = await TestServer.start(xmppConfig({ mod_stream_mgmt: { resume_timeout: 2, max_resume_timeout: 2 } }));
    await t.bootstrapAdmin();
    for (const user of ['carla', 'dan']) await t.server.services.accounts.register(user, 'localhost', 'pw');
  });
  after(() => t.stop());

  it('is offered, enabled by the client, and answers <r/> with the count of handled stanzas', async () => {
    const carla = await login(t, { user: 'carla', password: 'pw', resource: 'r' });
    try {
      const sm = await smEnabled(carla);
      expect(sm.enabled).to.equal(true);
      expect(sm.id).to.be.a('string').and.not.equal('');
      await carla.send(xml('presence'));
      // <a/> is not a stanza: @xmpp/client emits it as an 'element'.
      const ack = new Promise<any>((resolve) => carla.on('element', (el: any) => el.is('a', 'urn:xmpp:sm:3') && resolve(el)));
      await carla.write("<r xmlns='urn:xmpp:sm:3'/>");
      expect(Number((await ack).attrs.h)).to.be.greaterThan(0);
    } finally {
      await stopAll(carla);
    }
  });

  it('closes the stream when the client acknowledges more than was sent, <handled-count-too-high/> inside the stream error', async () => {
    const peer = await RawXmppPeer.connect(t.server.portOf('service_c2s')!);
    try {
      await peer.login('carla', 'pw', { resource: 'counter' });
      peer.write("<enable xmlns='urn:xmpp:sm:3'/>");
      await peer.waitFor(/<enabled\b/);
      // One stanza from the server: the answer to this IQ.
      peer.write("<iq type='get' id='one' to='localhost'><query xmlns='urn:test:nothing'/></iq>");
      await peer.waitFor(/<iq\b[^>]*id=['"]one['"]/);
      peer.write("<a xmlns='urn:xmpp:sm:3' h='5'/>");
      const error = await peer.streamError();
      expect(error.condition).to.equal('undefined-condition');
      // XEP-0198 §4: inside <stream:error>, next to the defined condition, and nowhere else.
      const tooHigh = /<handled-count-too-high\b[^>]*\/>/.exec(error.raw)?.[0];
      expect(tooHigh).to.be.a('string');
      expect(tooHigh).to.match(/xmlns=['"]urn:xmpp:sm:3['"]/).and.match(/\bh=['"]5['"]/).and.match(/send-count=['"]1['"]/);
      expect(peer.all.match(/<handled-count-too-high\b/g)).to.have.length(1);
      await peer.waitClosed();
    } finally {
      peer.destroy();
    }
  });

  it('resumes a session after a lost connection, with what was sent meanwhile', async () => {
    const carla = await login(t, { user: 'carla', password: 'pw', resource: 'phone', reconnect: true });
    const dan = await login(t, { user: 'dan', password: 'pw', resource: 'desk' });
    try {
      const sm = await smEnabled(carla);
      const id = sm.id;
      const resumed = new Promise<void>((resolve) => sm.on('resumed', resolve));
      cut(carla);
      // The server keeps the session: dan's message waits for it.
      await dan.send(xml('message', { to: 'carla@localhost/phone', type: 'chat' }, xml('body', {}, 'sent while you were away')));
      const arrived = next(carla, (s) => s.is('message') && s.getChildText('body') === 'sent while you were away', 8000);
      await resumed;
      expect(sm.id).to.equal(id);
      expect((await arrived).attrs.from).to.equal('dan@localhost/desk');
      const users = await t.api('connected_users', {}, { basic: 'admin@localhost:adminpass' });
      expect(users.body).to.include('carla@localhost/phone');
    } finally {
      await stopAll(carla, dan);
    }
  });

  it('ends a session that is not resumed in time, and gives its unacknowledged messages to another resource', async () => {
    const lost = await login(t, { user: 'carla', password: 'pw', resource: 'lost' });
    const other = await login(t, { user: 'carla', password: 'pw', resource: 'other' });
    const dan = await login(t, { user: 'dan', password: 'pw', resource: 'desk2' });
    try {
      await smEnabled(lost);
      await other.send(xml('presence'));
      await new Promise((r) => setTimeout(r, 100));
      cut(lost);
      await new Promise((r) => setTimeout(r, 100));
      await dan.send(xml('message', { to: 'carla@localhost/lost', type: 'chat' }, xml('body', {}, 'for the lost one')));
      // resume_timeout is 2 s: then the message is routed again, to the bare JID's available resource.
      const rerouted = await next(other, (s) => s.is('message') && s.getChildText('body') === 'for the lost one', 6000);
      expect(rerouted.attrs.to).to.equal('carla@localhost/lost');
      const users = await t.api('connected_users', {}, { basic: 'admin@localhost:adminpass' });
      expect(users.body).to.include('carla@localhost/other').and.not.include('carla@localhost/lost');
    } finally {
      await stopAll(lost, other, dan);
    }
  });
});
