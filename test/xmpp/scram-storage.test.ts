/**
 * Which SCRAM hashes a password is stored with (auth_scram_hash) and what that offers: by default one hash,
 * ejabberd's `sha` (SCRAM-SHA-1), so that setting a password costs one PBKDF2 derivation; only the
 * mechanisms of stored hashes are offered (a client that picks the strongest offered must not be handed
 * one that cannot succeed); with `sha256`, SCRAM-SHA-256 logs in and SHA-1 is neither stored nor offered;
 * PLAIN logs in against whatever is stored; plain storage offers every SCRAM mechanism.
 */
import { expect } from 'chai';
import { secureStream } from '../support/sasl-client.js';
import { TestServer } from '../support/server.js';
import { login, stopAll, xmppConfig } from '../support/xmpp.js';

/** A test configuration without the test suite's "every hash" setting: the server's default applies. */
function configWith(scramHash?: string | string[], format?: 'plain' | 'scram') {
  const config = xmppConfig();
  delete config.auth_scram_hash;
  if (scramHash !== undefined) config.auth_scram_hash = scramHash;
  if (format) config.auth_password_format = format;
  return config;
}

async function offered(t: TestServer): Promise<string[]> {
  const { peer, features } = await secureStream(t.server.portOf('service_c2s')!);
  peer.destroy();
  return features.mechanisms.filter((m) => m.startsWith('SCRAM-'));
}

describe('SCRAM password storage (auth_scram_hash)', () => {
  describe('by default', () => {
    let t: TestServer;
    before(async () => {
      t = await TestServer.start(configWith());
      await t.server.services.accounts.register('alice', 'localhost', 'alice-pw');
    });
    after(() => t.stop());

    it('stores one hash, SHA-1 (ejabberd\'s default), and offers only its mechanisms', async () => {
      const accounts = t.server.services.accounts;
      expect(await accounts.getScramCredentials('alice', 'localhost', 'sha1')).to.not.equal(undefined);
      expect(await accounts.getScramCredentials('alice', 'localhost', 'sha256')).to.equal(undefined);
      expect(await accounts.getScramCredentials('alice', 'localhost', 'sha512')).to.equal(undefined);
      expect(await offered(t)).to.deep.equal(['SCRAM-SHA-1-PLUS', 'SCRAM-SHA-1']);
    });

    it('logs in with SCRAM-SHA-1 and with PLAIN', async () => {
      for (const mechanism of ['SCRAM-SHA-1', 'PLAIN']) {
        const client = await login(t, { user: 'alice', password: 'alice-pw', mechanism });
        expect(String(client.jid).startsWith('alice@localhost/'), mechanism).to.equal(true);
        await stopAll(client);
      }
    });
  });

  describe('with sha256', () => {
    let t: TestServer;
    before(async () => {
      t = await TestServer.start(configWith('sha256'));
      await t.server.services.accounts.register('bob', 'localhost', 'bob-pw');
    });
    after(() => t.stop());

    it('stores and offers SHA-256 only, and logs in with it', async () => {
      const accounts = t.server.services.accounts;
      expect(await accounts.getScramCredentials('bob', 'localhost', 'sha256')).to.not.equal(undefined);
      expect(await accounts.getScramCredentials('bob', 'localhost', 'sha1')).to.equal(undefined);
      expect(await offered(t)).to.deep.equal(['SCRAM-SHA-256-PLUS', 'SCRAM-SHA-256']);
      const client = await login(t, { user: 'bob', password: 'bob-pw', mechanism: 'SCRAM-SHA-256' });
      await stopAll(client);
      expect(await accounts.checkPassword('bob', 'localhost', 'bob-pw')).to.equal(true);
      expect(await accounts.checkPassword('bob', 'localhost', 'wrong')).to.equal(false);
    });
  });

  it('takes a list, and refuses a hash it does not know, naming it', async () => {
    const t = await TestServer.start(configWith(['sha256', 'sha512']));
    try {
      expect(await offered(t)).to.deep.equal(['SCRAM-SHA-512-PLUS', 'SCRAM-SHA-256-PLUS', 'SCRAM-SHA-512', 'SCRAM-SHA-256']);
    } finally {
      await t.stop();
    }
    const refused = await TestServer.start(configWith('md5')).then(
      async (server) => {
        await server.stop();
        return 'started';
      },
      (err: Error) => err.message,
    );
    expect(refused).to.match(/auth_scram_hash/);
    expect(refused).to.match(/md5/);
  });

  it('offers every SCRAM mechanism with plain storage, which can compute them all', async () => {
    const t = await TestServer.start(configWith(undefined, 'plain'));
    try {
      expect((await offered(t)).length).to.equal(6);
    } finally {
      await t.stop();
    }
  });
});
