/**
 * Logging in to XMPP with an OAuth token: SASL X-OAUTH2 as the spec gives it (NUL, user, NUL, token) and
 * OAUTHBEARER (RFC 7628). The token needs sasl_auth and must be the account's on this vhost; an
 * authorization identity other than the owner is refused (the impersonation hole of other servers);
 * expired and revoked tokens fail at once; disable_sasl_mechanisms removes the mechanism, globally or per
 * virtual host.
 */
import { expect } from 'chai';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { TestServer, type RawConfig } from '../support/server.js';
import { login, stopAll, xmppConfig } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';

function config(extra: RawConfig = {}): RawConfig {
  return { ...xmppConfig(), oauth_access: 'all', ...extra };
}

/** Opens a stream over TLS on `host` and returns the offered mechanisms and the peer. */
async function saslPeer(t: TestServer, host = 'localhost'): Promise<{ peer: RawXmppPeer; mechanisms: string[] }> {
  const peer = await RawXmppPeer.connect(t.server.portOf('service_c2s')!);
  await peer.open({ to: host });
  await peer.startTls();
  const features = await peer.open({ to: host });
  const mechanisms = [...features.matchAll(/<mechanism>([^<]+)<\/mechanism>/g)].map((m) => m[1]!);
  return { peer, mechanisms };
}

/** Sends one `<auth/>` and resolves with `success` or the failure's condition. */
async function authenticate(peer: RawXmppPeer, mechanism: string, payload: string): Promise<string> {
  peer.resetReceived();
  peer.write(`<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='${mechanism}'>${Buffer.from(payload).toString('base64')}</auth>`);
  const [outcome] = await peer.waitFor(/<success\b[^>]*\/>|<success\b[\s\S]*?<\/success>|<failure\b[\s\S]*?<\/failure>|<challenge\b[\s\S]*?<\/challenge>/);
  if (outcome.startsWith('<success')) return 'success';
  if (outcome.startsWith('<challenge')) return 'challenge';
  return /<failure[^>]*><([a-z-]+)/.exec(outcome)?.[1] ?? outcome;
}

describe('SASL with OAuth tokens', () => {
  let t: TestServer;
  const issue = async (jid: string, scopes: string[], ttl = 600) => {
    const res = await t.api('oauth_issue_token', { jid, ttl, scopes }, { basic: ADMIN });
    expect(res.status, res.text).to.equal(200);
    return res.body.token as string;
  };

  before(async () => {
    t = await TestServer.start(config({ host_config: { 'example.com': { disable_sasl_mechanisms: ['X-OAUTH2', 'OAUTHBEARER'] } } }));
    await t.bootstrapAdmin();
    for (const user of ['kim', 'lou']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    await t.server.services.accounts.register('kim', 'example.com', 'kim-pw');
  });
  after(() => t.stop());

  it('offers X-OAUTH2 and OAUTHBEARER, and logs a client in with a sasl_auth token in place of the password', async () => {
    const { peer, mechanisms } = await saslPeer(t);
    peer.destroy();
    expect(mechanisms).to.include.members(['X-OAUTH2', 'OAUTHBEARER']);
    const token = await issue('kim@localhost', ['sasl_auth']);
    const client = await login(t, { user: 'kim', password: token, mechanism: 'X-OAUTH2', resource: 'oauth' });
    try {
      expect(client.jid!.toString()).to.equal('kim@localhost/oauth');
    } finally {
      await stopAll(client);
    }
  });

  it('refuses a token without sasl_auth, of another account, or for another user name, with <not-authorized/>', async () => {
    const apiOnly = await issue('kim@localhost', ['user_resources']);
    const lous = await issue('lou@localhost', ['sasl_auth']);
    for (const payload of [`\0kim\0${apiOnly}`, `\0kim\0${lous}`, `\0kim\0not-a-token`, `\0kim\0`]) {
      const { peer } = await saslPeer(t);
      expect(await authenticate(peer, 'X-OAUTH2', payload), JSON.stringify(payload.slice(0, 8))).to.equal('not-authorized');
      peer.destroy();
    }
  });

  it('refuses an authorization identity other than the token owner (no impersonation)', async () => {
    const token = await issue('lou@localhost', ['sasl_auth']);
    for (const authzid of ['kim@localhost', 'kim', 'admin@localhost']) {
      const { peer } = await saslPeer(t);
      expect(await authenticate(peer, 'X-OAUTH2', `${authzid}\0lou\0${token}`)).to.equal('not-authorized');
      peer.destroy();
    }
    const { peer } = await saslPeer(t);
    // The owner's own JID as authzid is fine.
    expect(await authenticate(peer, 'X-OAUTH2', `lou@localhost\0lou\0${token}`)).to.equal('success');
    peer.destroy();
  });

  it('refuses a token of the same user name on another virtual host', async () => {
    const token = await issue('kim@example.com', ['sasl_auth']);
    const { peer } = await saslPeer(t, 'localhost');
    expect(await authenticate(peer, 'X-OAUTH2', `\0kim\0${token}`)).to.equal('not-authorized');
    peer.destroy();
  });

  it('refuses a revoked token at once, and an expired one', async () => {
    const revoked = await issue('kim@localhost', ['sasl_auth']);
    const first = await saslPeer(t);
    expect(await authenticate(first.peer, 'X-OAUTH2', `\0kim\0${revoked}`)).to.equal('success');
    first.peer.destroy();
    expect((await t.api('oauth_revoke_token', { token: revoked }, { basic: ADMIN })).status).to.equal(200);
    const second = await saslPeer(t);
    expect(await authenticate(second.peer, 'X-OAUTH2', `\0kim\0${revoked}`)).to.equal('not-authorized');
    second.peer.destroy();

    const shortLived = await issue('kim@localhost', ['sasl_auth'], 1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const third = await saslPeer(t);
    expect(await authenticate(third.peer, 'X-OAUTH2', `\0kim\0${shortLived}`)).to.equal('not-authorized');
    third.peer.destroy();
  });

  it('takes the same tokens with OAUTHBEARER (RFC 7628), failing with a JSON challenge then <not-authorized/>', async () => {
    const token = await issue('kim@localhost', ['sasl_auth']);
    const ok = await saslPeer(t);
    expect(await authenticate(ok.peer, 'OAUTHBEARER', `n,a=kim@localhost,\x01host=localhost\x01auth=Bearer ${token}\x01\x01`)).to.equal('success');
    ok.peer.destroy();

    const bad = await saslPeer(t);
    expect(await authenticate(bad.peer, 'OAUTHBEARER', `n,,\x01auth=Bearer nope\x01\x01`)).to.equal('challenge');
    const challenge = /<challenge[^>]*>([^<]*)<\/challenge>/.exec(bad.peer.received)![1]!;
    expect(JSON.parse(Buffer.from(challenge, 'base64').toString())).to.deep.equal({ status: 'invalid_token', scope: 'sasl_auth' });
    bad.peer.resetReceived();
    bad.peer.write(`<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>${Buffer.from('\x01').toString('base64')}</response>`);
    const [failure] = await bad.peer.waitFor(/<failure\b[\s\S]*?<\/failure>/);
    expect(failure).to.contain('<not-authorized');
    bad.peer.destroy();

    const other = await saslPeer(t);
    expect(await authenticate(other.peer, 'OAUTHBEARER', `n,a=lou@localhost,\x01auth=Bearer ${token}\x01\x01`)).to.equal('not-authorized');
    other.peer.destroy();
  });

  it('removes the mechanisms on a virtual host whose host_config disables them', async () => {
    const { peer, mechanisms } = await saslPeer(t, 'example.com');
    expect(mechanisms).to.not.include('X-OAUTH2');
    expect(mechanisms).to.not.include('OAUTHBEARER');
    const token = await issue('kim@example.com', ['sasl_auth']);
    expect(await authenticate(peer, 'X-OAUTH2', `\0kim\0${token}`)).to.equal('invalid-mechanism');
    peer.destroy();
  });
});

describe('SASL with OAuth tokens disabled globally', () => {
  it('offers no X-OAUTH2 when disable_sasl_mechanisms lists it', async () => {
    const t = await TestServer.start(config({ disable_sasl_mechanisms: ['x-oauth2'] }));
    try {
      const { peer, mechanisms } = await saslPeer(t);
      expect(mechanisms).to.not.include('X-OAUTH2');
      expect(mechanisms).to.include('OAUTHBEARER');
      expect(await authenticate(peer, 'X-OAUTH2', '\0kim\0whatever')).to.equal('invalid-mechanism');
      peer.destroy();
    } finally {
      await t.stop();
    }
  });
});
