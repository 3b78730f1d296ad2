/**
 * A resumed session (XEP-0198) gets its account's shaper, as a bound one does: a new connection is shaped by
 * address until it resumes, then the rule is read again for the account, so an admin who resumes is read at
 * full speed while another account stays at the shaper's rate. Measured with a raw client: whitespace
 * (allowed between stanzas) followed by an acknowledgement request, timed until the server's answer.
 */
import { expect } from 'chai';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { TestServer } from '../support/server.js';
import { BURST, RATE, shapedConfig } from './shaped.js';

const NS_SM = 'urn:xmpp:sm:3';
const PADDING = 40_000;

describe('shapers and stream management resumption', function () {
  this.timeout(60_000);
  let t: TestServer;
  const peers: RawXmppPeer[] = [];

  before(async () => {
    const config = shapedConfig();
    config.modules = { ...(config.modules as Record<string, unknown>), mod_stream_mgmt: { resume_timeout: 30, max_resume_timeout: 30 } };
    t = await TestServer.start(config);
    await t.bootstrapAdmin('adminpass');
    await t.register('alice', 'localhost', 'alicepass');
  });

  after(async () => {
    for (const peer of peers) peer.destroy();
    await t?.stop();
  });

  /** Logs in with resumption enabled, drops the connection, resumes on a new one: the resumed stream. */
  async function resumed(user: string, password: string): Promise<RawXmppPeer> {
    const first = await RawXmppPeer.connect(t.server.portOf('service_c2s')!);
    peers.push(first);
    await first.login(user, password, { resource: 'phone' });
    first.write(`<enable xmlns='${NS_SM}' resume='true'/>`);
    const id = (await first.waitFor(/<enabled\b[^>]*\bid=['"]([^'"]+)['"]/))[1]!;
    first.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = await RawXmppPeer.connect(t.server.portOf('service_c2s')!);
    peers.push(again);
    await again.authenticate(user, password);
    again.write(`<resume xmlns='${NS_SM}' previd='${id}' h='0'/>`);
    await again.waitFor(new RegExp(`<resumed\\b[^>]*previd=['"]${id}['"]`));
    again.resetReceived();
    return again;
  }

  /** Milliseconds from writing PADDING bytes of whitespace, then <r/>, to the server's <a/>. */
  async function ackAfterPadding(peer: RawXmppPeer): Promise<number> {
    const start = performance.now();
    peer.write(' '.repeat(PADDING));
    // Written apart, so that <r/> is not in the padding's last TLS record (which the server handles before
    // the pause that record costs): it waits for the whole padding's pause.
    await new Promise((resolve) => setTimeout(resolve, 50));
    peer.write(`<r xmlns='${NS_SM}'/>`);
    await peer.waitFor(/<a\b/, 20_000);
    return performance.now() - start;
  }

  it('reads the rule again for the account that resumes: the admin unshaped, alice at the rate', async () => {
    const shapedMin = ((PADDING - BURST) / RATE) * 1000 * 0.85;
    const alice = await ackAfterPadding(await resumed('alice', 'alicepass'));
    expect(alice, `alice's ${PADDING} bytes after resuming took ${Math.round(alice)} ms`).to.be.within(shapedMin, (PADDING / RATE) * 1000 * 1.6 + 1500);
    const admin = await ackAfterPadding(await resumed('admin', 'adminpass'));
    expect(admin, `the admin's ${PADDING} bytes after resuming took ${Math.round(admin)} ms`).to.be.below(shapedMin * 0.3);
  });
});
