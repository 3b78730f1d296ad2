/**
 * Attacks on SASL that the server has checks for, sent over real sockets by a client that can say anything
 * (test/support/sasl-client.ts): impersonation through the authorization identity (PLAIN's authzid, SCRAM's
 * GS2 `a=`), SCRAM -PLUS with channel-binding data that does not belong to the connection, the GS2 `y` flag
 * as a downgrade (refused only where the connection offers -PLUS with tls-unique, i.e. TLS 1.2), and
 * XEP-0474's `h` attribute, checked against the stream features the client saw. Each refusal is paired with
 * the same exchange done right, which must succeed, so a refusal cannot come from a broken client.
 */
import { expect } from 'chai';
import type { SecureVersion } from 'node:tls';
import type { RawXmppPeer } from '../support/raw-xmpp.js';
import {
  SCRAM_MECHANISMS,
  bind,
  channelBindingData,
  downgradeHash,
  hashOf,
  plain,
  scram,
  secureStream,
  type ChannelBindingType,
  type ScramOptions,
} from '../support/sasl-client.js';
import { TestServer } from '../support/server.js';
import { xmppConfig } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';
const ALICE = { user: 'alice', password: 'alice-pw' };

describe('attacks on SASL', function () {
  this.timeout(60_000);
  let t: TestServer;
  let port: number;
  const peers: RawXmppPeer[] = [];

  async function secure(maxVersion: SecureVersion = 'TLSv1.3', host = 'localhost') {
    const opened = await secureStream(port, { maxVersion, host });
    peers.push(opened.peer);
    return opened;
  }

  /** A SCRAM exchange on a fresh stream; the peer is left at the outcome. */
  async function scramOn(maxVersion: SecureVersion, options: ScramOptions) {
    const { peer, features } = await secure(maxVersion);
    const result = await scram(peer, options);
    return { peer, features, result };
  }

  /** bob has no session (nobody became bob), and no login as bob was logged. */
  async function expectNoSessionAsBob(): Promise<void> {
    const res = await t.api('user_resources', { user: 'bob', host: 'localhost' }, { basic: ADMIN });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal([]);
    expect(t.logged((line) => line.msg === 'authenticated' && line.user === 'bob@localhost')).to.deep.equal([]);
  }

  /** The stream is still unauthenticated: anything but SASL now is a not-authorized stream error. */
  async function expectUnauthenticated(peer: RawXmppPeer): Promise<void> {
    peer.write("<iq type='set' id='b'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></iq>");
    expect((await peer.streamError()).condition).to.equal('not-authorized');
  }

  before(async () => {
    const config = xmppConfig();
    // Many refused logins from 127.0.0.1 on purpose: the failed-login limit is tested elsewhere.
    config.login_failures_per_address = 100_000;
    config.login_failures_per_account = 100_000;
    // example.com announces fewer mechanisms: XEP-0474's h must follow what each stream announced.
    config.host_config = { 'example.com': { disable_sasl_mechanisms: ['SCRAM-SHA-1', 'SCRAM-SHA-1-PLUS', 'PLAIN'] } };
    t = await TestServer.start(config);
    port = t.server.portOf('service_c2s')!;
    await t.bootstrapAdmin();
    for (const user of ['alice', 'bob']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    await t.server.services.accounts.register('alice', 'example.com', 'alice-pw');
  });

  afterEach(() => {
    for (const peer of peers.splice(0)) peer.destroy();
  });

  after(() => t?.stop());

  describe('authorization identity (no impersonation)', () => {
    it('PLAIN: alice with her own password and the authzid bob@localhost is refused with invalid-authzid, and nobody is bob', async () => {
      for (const authzid of ['bob@localhost', 'bob', 'BOB@LOCALHOST', 'bob@localhost/phone', 'alice@example.com', 'localhost', 'admin@localhost']) {
        const { peer } = await secure();
        const answer = await plain(peer, ALICE.user, ALICE.password, authzid);
        expect(answer.outcome, `authzid ${authzid}: ${answer.text}`).to.equal('invalid-authzid');
        await expectUnauthenticated(peer);
      }
      await expectNoSessionAsBob();
    });

    it('PLAIN: the authzid of alice herself (any spelling of her bare JID) is accepted, and she is bound as alice', async () => {
      for (const authzid of ['alice@localhost', 'ALICE@LocalHost', '']) {
        const { peer } = await secure();
        const answer = await plain(peer, ALICE.user, ALICE.password, authzid);
        expect(answer.outcome, `authzid ${JSON.stringify(authzid)}: ${answer.text}`).to.equal('success');
        expect(await bind(peer, 'localhost', 'r')).to.equal('alice@localhost/r');
        peer.destroy();
      }
    });

    it('PLAIN: a wrong password with the authzid of bob is not-authorized (the authzid says nothing before the password)', async () => {
      const { peer } = await secure();
      expect((await plain(peer, ALICE.user, 'wrong', 'bob@localhost')).outcome).to.equal('not-authorized');
    });

    for (const mechanism of [...SCRAM_MECHANISMS, ...SCRAM_MECHANISMS.map((m) => `${m}-PLUS`)]) {
      it(`${mechanism}: the GS2 authzid a=bob@localhost is refused with invalid-authzid at the first message; a=alice@localhost logs in`, async () => {
        for (const authzid of ['bob@localhost', 'BOB@localhost', 'bob', 'alice@example.com', 'bob=2C@localhost']) {
          const { result, peer } = await scramOn('TLSv1.3', { mechanism, ...ALICE, authzid });
          expect(result.outcome, `a=${authzid}: ${result.text}`).to.equal('invalid-authzid');
          expect(result.failedAt).to.equal('first');
          await expectUnauthenticated(peer);
        }
        await expectNoSessionAsBob();
        const own = await scramOn('TLSv1.3', { mechanism, ...ALICE, authzid: 'alice@localhost' });
        expect(own.result.outcome, own.result.text).to.equal('success');
        expect(own.result.serverVerified).to.equal(true);
        expect(await bind(own.peer, 'localhost', 'scram')).to.equal('alice@localhost/scram');
      });
    }
  });

  describe('SCRAM -PLUS channel binding', () => {
    const cases: Array<{ tls: SecureVersion; type: ChannelBindingType }> = [
      { tls: 'TLSv1.2', type: 'tls-unique' },
      { tls: 'TLSv1.2', type: 'tls-server-end-point' },
      { tls: 'TLSv1.3', type: 'tls-exporter' },
      { tls: 'TLSv1.3', type: 'tls-server-end-point' },
    ];

    for (const { tls, type } of cases) {
      it(`${type} on ${tls}: logs in with every SCRAM -PLUS hash, the server signature checks out`, async () => {
        for (const base of SCRAM_MECHANISMS) {
          const { peer, features, result } = await scramOn(tls, { mechanism: `${base}-PLUS`, ...ALICE, cbType: type });
          expect(features.channelBindings, `${tls} announces ${type}`).to.include(type);
          expect(peer.tls.getProtocol()).to.equal(tls);
          expect(result.outcome, `${base}-PLUS: ${result.text}`).to.equal('success');
          expect(result.serverVerified, `${base}-PLUS server signature`).to.equal(true);
          expect(await bind(peer)).to.match(/^alice@localhost\//);
        }
      });
    }

    it('tls-unique on TLS 1.2 is the first Finished message (the client\'s): the server\'s Finished is refused', async () => {
      const { peer } = await secure('TLSv1.2');
      const serverFinished = peer.tls.getPeerFinished()!;
      expect(serverFinished.equals(channelBindingData(peer.tls, 'tls-unique'))).to.equal(false);
      const result = await scram(peer, { mechanism: 'SCRAM-SHA-256-PLUS', ...ALICE, cbType: 'tls-unique', cbData: serverFinished });
      expect(result.outcome).to.equal('not-authorized');
      expect(result.failedAt).to.equal('final');
    });

    it('tls-unique after a resumed TLS 1.2 session is the server\'s Finished (the first of an abbreviated handshake)', async () => {
      const first = await secure('TLSv1.2');
      expect(first.peer.tlsSession, 'the server gives a TLS 1.2 session ticket').to.not.equal(undefined);
      const opened = await secureStream(port, { maxVersion: 'TLSv1.2', session: first.peer.tlsSession });
      peers.push(opened.peer);
      expect(opened.peer.tls.isSessionReused(), 'the session was resumed').to.equal(true);
      const result = await scram(opened.peer, { mechanism: 'SCRAM-SHA-256-PLUS', ...ALICE, cbType: 'tls-unique' });
      expect(result.outcome, result.text).to.equal('success');
      const again = await secureStream(port, { maxVersion: 'TLSv1.2', session: first.peer.tlsSession });
      peers.push(again.peer);
      expect(again.peer.tls.isSessionReused()).to.equal(true);
      const wrong = await scram(again.peer, { mechanism: 'SCRAM-SHA-256-PLUS', ...ALICE, cbType: 'tls-unique', cbData: again.peer.tls.getFinished()! });
      expect(wrong.outcome, 'the client\'s Finished of an abbreviated handshake').to.equal('not-authorized');
    });

    it('binding data computed over other data, or of another type than claimed, is not-authorized with the right password', async () => {
      const attempts: Array<{ tls: SecureVersion; claim: ChannelBindingType; data: (p: RawXmppPeer) => Buffer; what: string }> = [
        { tls: 'TLSv1.3', claim: 'tls-exporter', data: (p) => p.tls.exportKeyingMaterial(32, 'EXPORTER-Other-Label', Buffer.alloc(0)), what: 'an exporter with another label' },
        { tls: 'TLSv1.3', claim: 'tls-exporter', data: (p) => p.tls.exportKeyingMaterial(32, 'EXPORTER-Channel-Binding', Buffer.from('ctx')), what: 'an exporter with a context' },
        { tls: 'TLSv1.3', claim: 'tls-exporter', data: (p) => channelBindingData(p.tls, 'tls-server-end-point'), what: 'tls-server-end-point data' },
        { tls: 'TLSv1.3', claim: 'tls-server-end-point', data: (p) => channelBindingData(p.tls, 'tls-exporter'), what: 'tls-exporter data' },
        { tls: 'TLSv1.3', claim: 'tls-server-end-point', data: () => Buffer.alloc(0), what: 'no data' },
        { tls: 'TLSv1.2', claim: 'tls-unique', data: (p) => channelBindingData(p.tls, 'tls-server-end-point'), what: 'tls-server-end-point data' },
        { tls: 'TLSv1.2', claim: 'tls-server-end-point', data: (p) => channelBindingData(p.tls, 'tls-unique'), what: 'tls-unique data' },
        { tls: 'TLSv1.2', claim: 'tls-unique', data: (p) => Buffer.concat([channelBindingData(p.tls, 'tls-unique'), Buffer.from([0])]), what: 'the Finished message and one more byte' },
      ];
      for (const { tls, claim, data, what } of attempts) {
        const { peer } = await secure(tls);
        const result = await scram(peer, { mechanism: 'SCRAM-SHA-256-PLUS', ...ALICE, cbType: claim, cbData: data(peer) });
        expect(result.outcome, `${claim} on ${tls} with ${what}: ${result.text}`).to.equal('not-authorized');
        expect(result.failedAt).to.equal('final');
        await expectUnauthenticated(peer);
      }
    });

    it('a binding from another connection (a man in the middle relaying the exchange) is not-authorized', async () => {
      for (const [tls, type] of [['TLSv1.3', 'tls-exporter'], ['TLSv1.2', 'tls-unique']] as const) {
        const other = await secure(tls);
        const { peer } = await secure(tls);
        const result = await scram(peer, { mechanism: 'SCRAM-SHA-512-PLUS', ...ALICE, cbType: type, cbData: channelBindingData(other.peer.tls, type) });
        expect(result.outcome, `${type}: ${result.text}`).to.equal('not-authorized');
      }
    });

    it('c= must repeat the GS2 header of the first message: another flag or authzid there is not-authorized', async () => {
      for (const cHeader of ['n,,', 'y,,', 'p=tls-server-end-point,,', 'p=tls-exporter,a=alice@localhost,']) {
        const { peer } = await secure('TLSv1.3');
        const result = await scram(peer, { mechanism: 'SCRAM-SHA-256-PLUS', ...ALICE, cbType: 'tls-exporter', cHeader });
        expect(result.outcome, `c= over ${cHeader}: ${result.text}`).to.equal('not-authorized');
      }
      const { peer } = await secure('TLSv1.3');
      const plainScram = await scram(peer, { mechanism: 'SCRAM-SHA-256', ...ALICE, cHeader: 'y,,' });
      expect(plainScram.outcome, 'SCRAM-SHA-256 with c= of y,, after n,,').to.equal('not-authorized');
    });

    it('a binding type the connection does not have, or -PLUS without p=, is refused at the first message', async () => {
      const attempts: Array<{ tls: SecureVersion; mechanism: string; flag?: string; type?: ChannelBindingType }> = [
        { tls: 'TLSv1.3', mechanism: 'SCRAM-SHA-256-PLUS', type: 'tls-unique' },
        { tls: 'TLSv1.2', mechanism: 'SCRAM-SHA-256-PLUS', type: 'tls-exporter' },
        { tls: 'TLSv1.3', mechanism: 'SCRAM-SHA-256-PLUS', flag: 'p=tls-made-up' },
        { tls: 'TLSv1.3', mechanism: 'SCRAM-SHA-256-PLUS', flag: 'n' },
        { tls: 'TLSv1.3', mechanism: 'SCRAM-SHA-256-PLUS', flag: 'y' },
        { tls: 'TLSv1.3', mechanism: 'SCRAM-SHA-256', flag: 'p=tls-exporter' },
      ];
      for (const { tls, mechanism, flag, type } of attempts) {
        const { peer } = await secure(tls);
        const result = await scram(peer, { mechanism, ...ALICE, flag: flag ?? `p=${type}`, cbType: type ?? 'tls-exporter' });
        expect(result.outcome, `${mechanism} ${flag ?? `p=${type}`} on ${tls}: ${result.text}`).to.equal('malformed-request');
        expect(result.failedAt).to.equal('first');
      }
    });
  });

  describe('downgrade: the GS2 flag y', () => {
    it('TLS 1.2 (-PLUS offered with tls-unique): y is refused as a downgrade, for every hash; n still logs in', async () => {
      for (const mechanism of SCRAM_MECHANISMS) {
        const { features, result, peer } = await scramOn('TLSv1.2', { mechanism, ...ALICE, flag: 'y' });
        expect(features.mechanisms).to.include(`${mechanism}-PLUS`);
        expect(features.channelBindings).to.include('tls-unique');
        expect(result.outcome, `${mechanism} y on TLS 1.2`).to.equal('not-authorized');
        expect(result.text).to.match(/downgrade/);
        await expectUnauthenticated(peer);
        const honest = await scramOn('TLSv1.2', { mechanism, ...ALICE, flag: 'n' });
        expect(honest.result.outcome, `${mechanism} n on TLS 1.2: ${honest.result.text}`).to.equal('success');
      }
    });

    it('TLS 1.3 (no tls-unique): y is accepted, for every hash', async () => {
      for (const mechanism of SCRAM_MECHANISMS) {
        const { features, result } = await scramOn('TLSv1.3', { mechanism, ...ALICE, flag: 'y' });
        expect(features.mechanisms).to.include(`${mechanism}-PLUS`);
        expect(features.channelBindings).to.not.include('tls-unique');
        expect(result.outcome, `${mechanism} y on TLS 1.3: ${result.text}`).to.equal('success');
        expect(result.serverVerified).to.equal(true);
      }
    });
  });

  describe('XEP-0474 downgrade protection (h in the server-first-message)', () => {
    for (const [tls, host] of [['TLSv1.3', 'localhost'], ['TLSv1.2', 'localhost'], ['TLSv1.3', 'example.com']] as const) {
      it(`h is the hash of what this stream announced (${tls}, ${host}), for every SCRAM mechanism offered`, async () => {
        const probe = await secure(tls, host);
        probe.peer.destroy();
        const scramOffered = probe.features.mechanisms.filter((m) => m.startsWith('SCRAM-'));
        expect(scramOffered.length).to.be.greaterThan(2);
        for (const mechanism of scramOffered) {
          const { peer, features } = await secure(tls, host);
          const result = await scram(peer, { mechanism, ...ALICE, cbType: tls === 'TLSv1.2' ? 'tls-unique' : 'tls-exporter' });
          expect(result.outcome, `${mechanism}: ${result.text}`).to.equal('success');
          expect(result.attributes!.h, `${mechanism}: server-first ${result.serverFirst}`).to.equal(downgradeHash(hashOf(mechanism), features));
        }
      });
    }

    it('the hashes of the two hosts differ, as their mechanism lists do', async () => {
      const local = await scramOn('TLSv1.3', { mechanism: 'SCRAM-SHA-256', ...ALICE });
      const { peer, features } = await secure('TLSv1.3', 'example.com');
      const other = await scram(peer, { mechanism: 'SCRAM-SHA-256', ...ALICE });
      expect(features.mechanisms).to.not.include('SCRAM-SHA-1');
      expect(other.outcome).to.equal('success');
      expect(other.attributes!.h).to.not.equal(local.result.attributes!.h);
    });

    it('the proof covers h: a proof computed over the server-first-message without h is not-authorized', async () => {
      for (const mechanism of ['SCRAM-SHA-1', 'SCRAM-SHA-256-PLUS', 'SCRAM-SHA-512']) {
        const { result } = await scramOn('TLSv1.3', { mechanism, ...ALICE, dropH: true });
        expect(result.outcome, mechanism).to.equal('not-authorized');
        expect(result.failedAt).to.equal('final');
      }
    });
  });
});
