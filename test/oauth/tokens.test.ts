/**
 * OAuth tokens through the commands and the HTTP API: issuing (scopes checked, ttl capped), listing by
 * public id, revoking (at once, with the cache on), expiry, Bearer authentication with api_permissions'
 * oauth clauses, and the identity binding of tokens without service:admin.
 */
import { request as httpRequest } from 'node:http';
import { expect } from 'chai';
import { oauthConfig } from '../support/oauth-config.js';
import { TestServer } from '../support/server.js';

const ADMIN = 'admin@localhost:adminpass';

describe('OAuth tokens', () => {
  let t: TestServer;
  const issue = async (jid: string, ttl: number, scopes: string[]) => (await t.api('oauth_issue_token', { jid, ttl, scopes }, { basic: ADMIN })).body;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  before(async () => {
    t = await TestServer.start(oauthConfig(), { plugins: ['mod_fixture'] });
    await t.bootstrapAdmin();
    for (const user of ['ann', 'ben']) await t.server.services.accounts.register(user, 'localhost', 'pw');
  });
  after(() => t.stop());

  describe('oauth_issue_token', () => {
    it('issues a token with the scopes asked for and ttl seconds', async () => {
      const res = await issue('ann@localhost', 600, ['sasl_auth', 'user_resources']);
      expect(res.token).to.be.a('string').with.length(43);
      expect(res.scopes).to.deep.equal(['sasl_auth', 'user_resources']);
      expect(res.expires_in).to.equal('600');
    });

    it('caps the ttl at oauth_expire', async () => {
      expect((await issue('ann@localhost', 999999, ['sasl_auth'])).expires_in).to.equal('3600');
    });

    it('refuses an unknown scope with invalid_scope, also a command of a module that is not enabled', async () => {
      for (const scope of ['no_such_command', 'fixture_echo']) {
        const res = await t.api('oauth_issue_token', { jid: 'ann@localhost', ttl: 60, scopes: ['sasl_auth', scope] }, { basic: ADMIN });
        expect(res.status).to.equal(400);
        expect(res.body.message).to.match(new RegExp(`invalid_scope: '${scope}' is not a scope of this server`));
      }
    });

    it('refuses an account that does not exist, and a non-positive ttl', async () => {
      expect((await t.api('oauth_issue_token', { jid: 'nobody@localhost', ttl: 60, scopes: ['sasl_auth'] }, { basic: ADMIN })).status).to.equal(404);
      expect((await t.api('oauth_issue_token', { jid: 'ann@localhost', ttl: 0, scopes: ['sasl_auth'] }, { basic: ADMIN })).status).to.equal(400);
    });

    it('keeps the pre-24.02 form (scopes as one string) at API version 0', async () => {
      const res = await t.api('oauth_issue_token', { jid: 'ann@localhost', ttl: 60, scopes: 'sasl_auth;user_resources' }, { basic: ADMIN, prefix: '/api/v0' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.scopes).to.equal('sasl_auth;user_resources');
    });
  });

  describe('listing and revoking', () => {
    it('lists tokens by public id with the seconds left, never the token itself', async () => {
      const { token } = await issue('ben@localhost', 300, ['sasl_auth']);
      const list = (await t.api('oauth_list_tokens', {}, { basic: ADMIN })).body as Array<{ token: string; user: string; scope: string; expires_in: string }>;
      const mine = list.find((l) => l.user === 'ben@localhost');
      expect(mine).to.exist;
      expect(mine!.token).to.not.equal(token);
      expect(Number(mine!.expires_in)).to.be.within(295, 300);
      expect(mine!.scope).to.equal('sasl_auth');
      expect(JSON.stringify(list)).to.not.include(token);
    });

    it('revokes by id or by token, at once even with the cache on', async () => {
      const { token } = await issue('ann@localhost', 300, ['user_resources']);
      expect((await t.api('user_resources', {}, { headers: bearer(token) })).status).to.equal(200);
      const id = ((await t.api('oauth_list_tokens', {}, { basic: ADMIN })).body as any[]).at(-1).token;
      expect((await t.api('oauth_revoke_token', { token: id }, { basic: ADMIN })).body).to.equal('Token revoked');
      const after = await t.api('user_resources', {}, { headers: bearer(token) });
      expect(after.status).to.equal(401);
      expect(after.headers.get('www-authenticate')).to.equal('Bearer error="invalid_token"');
      expect((await t.api('oauth_revoke_token', { token: id }, { basic: ADMIN })).status).to.equal(404);
      const other = await issue('ann@localhost', 300, ['user_resources']);
      expect((await t.api('oauth_revoke_token', { token: other.token }, { basic: ADMIN })).body).to.equal('Token revoked');
    });

    it('stops accepting a token when it expires', async () => {
      const { token } = await issue('ann@localhost', 1, ['user_resources']);
      expect((await t.api('user_resources', {}, { headers: bearer(token) })).status).to.equal(200);
      await new Promise((r) => setTimeout(r, 1200));
      const res = await t.api('user_resources', {}, { headers: bearer(token) });
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.equal({ status: 'error', code: 10, message: 'Oauth Token is invalid or expired.' });
    });
  });

  describe('Bearer calls', () => {
    it('lets a service:admin token of an admin act as admin', async () => {
      await t.server.services.accounts.register('admin', 'example.com', 'x').catch(() => {});
      const { token } = await issue('admin@localhost', 300, ['service:admin']);
      const res = await t.api('registered_users', { host: 'localhost' }, { headers: bearer(token) });
      expect(res.status).to.equal(200);
      expect(res.body).to.include('ann');
      expect((await t.api('user_resources', { user: 'ben', host: 'localhost' }, { headers: bearer(token) })).status).to.equal(200);
    });

    it('refuses service:admin to an account that does not pass the admin rules', async () => {
      const { token } = await issue('ann@localhost', 300, ['service:admin']);
      expect((await t.api('registered_users', { host: 'localhost' }, { headers: bearer(token) })).status).to.equal(403);
    });

    it('binds a user token to its own account: defaults, and refuses another account', async () => {
      const { token } = await issue('ann@localhost', 300, ['service:user']);
      const own = await t.api('user_resources', {}, { headers: bearer(token) });
      expect(own.status).to.equal(200);
      expect(own.body).to.deep.equal([]);
      expect((await t.api('user_resources', { user: 'ann', host: 'localhost' }, { headers: bearer(token) })).status).to.equal(200);
      const other = await t.api('user_resources', { user: 'ben', host: 'localhost' }, { headers: bearer(token) });
      expect(other.status).to.equal(403);
      expect(other.body.message).to.match(/act only on their own account \(ann@localhost\); user must be ann or left out/);
    });

    it('refuses a user token on admin commands', async () => {
      const { token } = await issue('ann@localhost', 300, ['service:user']);
      expect((await t.api('registered_users', { host: 'localhost' }, { headers: bearer(token) })).status).to.equal(403);
      expect((await t.api('register', { user: 'x', host: 'localhost', password: 'p' }, { headers: bearer(token) })).status).to.equal(403);
    });

    it('answers a Bearer header with empty or bad credentials with the Bearer challenge (invalid_token), never Basic', async () => {
      const unauthorized = { status: 'error', code: 10, message: 'Oauth Token is invalid or expired.' };
      for (const authorization of ['Bearer ', 'Bearer', 'bearer   ', 'BEARER not-a-token', 'Bearer not-a-token']) {
        const res = await t.api('user_resources', {}, { authorization });
        expect(res.status, JSON.stringify(authorization)).to.equal(401);
        expect(res.body, JSON.stringify(authorization)).to.deep.equal(unauthorized);
        expect(res.headers.get('www-authenticate'), JSON.stringify(authorization)).to.equal('Bearer error="invalid_token"');
      }
      // fetch trims header values; node:http sends "Bearer " byte for byte, as a careless client would.
      const raw = await new Promise<{ status: number; challenge: string | undefined; body: string }>((resolve, reject) => {
        const req = httpRequest(t.url('/api/user_resources'), { method: 'POST', headers: { authorization: 'Bearer ', 'content-type': 'application/json' } }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, challenge: res.headers['www-authenticate'], body }));
        });
        req.on('error', reject);
        req.end('{}');
      });
      expect(raw).to.deep.equal({ status: 401, challenge: 'Bearer error="invalid_token"', body: JSON.stringify(unauthorized) });
      // Basic keeps the Basic challenge.
      const basic = await t.api('user_resources', {}, { basic: 'ann@localhost:wrong' });
      expect(basic.status).to.equal(401);
      expect(basic.headers.get('www-authenticate')).to.equal('Basic realm="service", charset="UTF-8"');
    });

    it('grants a per-command scope for that command only', async () => {
      const { token } = await issue('ann@localhost', 300, ['user_resources']);
      expect((await t.api('user_resources', {}, { headers: bearer(token) })).status).to.equal(200);
      expect((await t.api('kick_user', {}, { headers: bearer(token) })).status).to.equal(403);
    });
  });

  describe('clients', () => {
    it('adds, refuses duplicates, and removes clients', async () => {
      expect((await t.api('oauth_add_client_implicit', { client_id: 'app1', client_name: 'App One', redirect_uri: 'https://app.example/cb' }, { basic: ADMIN })).body).to.equal('OAuth client app1 added');
      expect((await t.api('oauth_add_client_implicit', { client_id: 'app1', client_name: 'Again', redirect_uri: 'https://app.example/cb' }, { basic: ADMIN })).status).to.equal(409);
      expect((await t.api('oauth_add_client_implicit', { client_id: 'bad', client_name: 'Bad', redirect_uri: 'not a url' }, { basic: ADMIN })).status).to.equal(400);
      expect((await t.api('oauth_add_client_password', { client_id: 'app2', client_name: 'App Two', secret: 's3cret' }, { basic: ADMIN })).body).to.equal('OAuth client app2 added');
      const row = await t.server.services.storage.db('sql')('oauth_clients').where({ client_id: 'app2' }).first();
      expect(row.secret_hash).to.match(/^scrypt\$/).and.not.include('s3cret');
      expect((await t.api('oauth_remove_client', { client_id: 'app1' }, { basic: ADMIN })).body).to.equal('OAuth client app1 removed');
      expect((await t.api('oauth_remove_client', { client_id: 'app1' }, { basic: ADMIN })).status).to.equal(404);
    });
  });

  it('never writes a token or a client secret to the log', async () => {
    const issued = await issue('ann@localhost', 60, ['sasl_auth']);
    await t.api('user_resources', {}, { headers: bearer(issued.token) });
    const log = JSON.stringify(t.logs);
    expect(log).to.not.include(issued.token);
    expect(log).to.not.include('s3cret');
  });
});
