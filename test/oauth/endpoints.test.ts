/**
 * The /oauth endpoints end to end over HTTP: the spec's authorization form (implicit grant) with its CSRF
 * token, exact redirect URIs and error redirects; the token endpoint's password grant under each
 * oauth_client_id_check, with RFC 6749 errors; the authorization code flow with PKCE, refresh rotation and
 * reuse detection, and client_credentials (through oidc-provider); revocation, introspection, metadata;
 * failed-login limits; and tokens never written to the log.
 */
import { expect } from 'chai';
import { Browser, basicAuth, hiddenFields, pkce, type Page } from '../support/oauth-client.js';
import { TestServer, type RawConfig } from '../support/server.js';
import { oauthConfig } from '../support/oauth-config.js';

const ADMIN = 'admin@localhost:adminpass';
const APP = 'https://app.example/callback';

function endpointsConfig(extra: RawConfig = {}): RawConfig {
  const config = oauthConfig();
  (config.listen as Array<Record<string, unknown>>)[0]!.request_handlers = { '/api': 'mod_http_api', '/oauth': 'service_oauth' };
  config.acl = { ...(config.acl as object), outsiders: { user: 'dora@localhost' } };
  config.access_rules = { oauth_users: { deny: 'outsiders', allow: 'all' } };
  config.oauth_access = 'oauth_users';
  config.api_permissions = {
    ...(config.api_permissions as object),
    'monitoring apps': { who: { oauth: { scope: 'status', access: 'all' } }, what: ['status', 'user_resources'] },
  };
  return { ...config, ...extra };
}

function authorizeQuery(params: Record<string, string | undefined>): string {
  return new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString();
}

describe('OAuth endpoints', () => {
  let t: TestServer;
  let browser: Browser;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  before(async () => {
    t = await TestServer.start(endpointsConfig());
    await t.bootstrapAdmin();
    for (const user of ['ann', 'ben', 'dora', 'gus', 'hal', 'ivy']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    const add = (command: string, args: Record<string, string>) => t.api(command, args, { basic: ADMIN });
    expect((await add('oauth_add_client_implicit', { client_id: 'webapp', client_name: 'Web App', redirect_uri: APP })).status).to.equal(200);
    expect((await add('oauth_add_client_implicit', { client_id: 'queryapp', client_name: 'Query App', redirect_uri: `${APP}?tenant=7` })).status).to.equal(200);
    expect((await add('oauth_add_client_password', { client_id: 'backend', client_name: 'Backend', secret: 's3cret+/=' })).status).to.equal(200);
  });
  beforeEach(() => {
    browser = new Browser(t.url('/'));
  });
  after(() => t?.stop());

  describe('GET /oauth/authorization_token', () => {
    it('shows a form that names the application and the scopes, with a CSRF token and an Accept action', async () => {
      const page = await browser.get(`/oauth/authorization_token?${authorizeQuery({ response_type: 'token', client_id: 'webapp', scope: 'user_resources sasl_auth', redirect_uri: APP, state: 'st1' })}`);
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.match(/text\/html/);
      expect(page.headers.get('cache-control')).to.equal('no-store');
      expect(page.headers.get('x-frame-options')).to.equal('DENY');
      expect(page.text).to.contain('Web App');
      expect(page.text).to.contain('user_resources').and.to.contain('sasl_auth');
      expect(page.text).to.match(/name="username"/).and.to.match(/type="password" id="password" name="password"/);
      expect(page.text).to.match(/<button type="submit" name="accept" value="1">Accept<\/button>/);
      const hidden = hiddenFields(page.text);
      expect(hidden).to.include({ response_type: 'token', client_id: 'webapp', redirect_uri: APP, state: 'st1', scope: 'user_resources sasl_auth' });
      expect(hidden.csrf_token).to.be.a('string').with.length.greaterThan(20);
    });

    it('shows an error page, never a redirect, for an unknown client or a redirect URI that differs from the registered one', async () => {
      for (const query of [
        { response_type: 'token', client_id: 'nosuchapp', scope: 'sasl_auth', redirect_uri: APP },
        { response_type: 'token', client_id: 'webapp', scope: 'sasl_auth', redirect_uri: 'https://evil.example/callback' },
        { response_type: 'token', client_id: 'webapp', scope: 'sasl_auth', redirect_uri: `${APP}/` },
        { response_type: 'token', client_id: 'webapp', scope: 'sasl_auth' },
        { response_type: 'token', client_id: 'backend', scope: 'sasl_auth', redirect_uri: APP },
      ]) {
        const page = await browser.get(`/oauth/authorization_token?${authorizeQuery(query)}`);
        expect(page.status, JSON.stringify(query)).to.equal(400);
        expect(page.location).to.equal(undefined);
        expect(page.text).to.contain('Authorization error');
      }
    });

    it('redirects with error=invalid_scope for a command of a module that is not enabled, and for an unknown scope', async () => {
      for (const scope of ['get_roster', 'sasl_auth+no_such_thing']) {
        const page = await browser.get(`/oauth/authorization_token?${authorizeQuery({ response_type: 'token', client_id: 'webapp', scope, redirect_uri: APP, state: 'xyz' })}`);
        expect(page.status).to.equal(302);
        expect(page.location!.origin + page.location!.pathname).to.equal(APP);
        expect(page.location!.searchParams.get('error')).to.equal('invalid_scope');
        expect(page.location!.searchParams.get('state')).to.equal('xyz');
      }
    });

    it('redirects with unsupported_response_type when response_type is not token', async () => {
      const page = await browser.get(`/oauth/authorization_token?${authorizeQuery({ response_type: 'code', client_id: 'webapp', scope: 'sasl_auth', redirect_uri: APP, state: 's' })}`);
      expect(page.status).to.equal(302);
      expect(page.location!.searchParams.get('error')).to.equal('unsupported_response_type');
    });
  });

  describe('POST /oauth/authorization_token', () => {
    async function form(query: Record<string, string | undefined>): Promise<Record<string, string>> {
      const page = await browser.get(`/oauth/authorization_token?${authorizeQuery({ response_type: 'token', client_id: 'webapp', redirect_uri: APP, ...query })}`);
      expect(page.status, page.text).to.equal(200);
      return hiddenFields(page.text);
    }

    it('redirects with the token, bearer, expires_in, the scopes joined with + and the state; the token works', async () => {
      const hidden = await form({ scope: 'user_resources sasl_auth', state: 'abc 123' });
      const page = await browser.post('/oauth/authorization_token', { ...hidden, username: 'ann@localhost', password: 'ann-pw', accept: '1' });
      expect(page.status).to.equal(302);
      expect(page.location!.origin + page.location!.pathname).to.equal(APP);
      const query = page.location!.searchParams;
      expect(query.get('access_token')).to.be.a('string').with.length(43);
      expect(query.get('token_type')).to.equal('bearer');
      expect(query.get('expires_in')).to.equal('3600');
      expect(page.location!.search).to.contain('scope=user_resources+sasl_auth');
      expect(query.get('state')).to.equal('abc 123');
      const res = await t.api('user_resources', {}, { headers: bearer(query.get('access_token')!) });
      expect(res.status, res.text).to.equal(200);
    });

    it('sends an empty state when none was given, keeps a redirect URI query, and honours ttl', async () => {
      const page0 = await browser.get(`/oauth/authorization_token?${authorizeQuery({ response_type: 'token', client_id: 'queryapp', redirect_uri: `${APP}?tenant=7`, scope: 'sasl_auth', ttl: '120' })}`);
      const page = await browser.post('/oauth/authorization_token', { ...hiddenFields(page0.text), username: 'ann@localhost', password: 'ann-pw' });
      expect(page.status).to.equal(302);
      expect(page.location!.searchParams.get('tenant')).to.equal('7');
      expect(page.location!.searchParams.get('state')).to.equal('');
      expect(page.location!.search).to.match(/[?&]state=(&|$)/);
      expect(page.location!.searchParams.get('expires_in')).to.equal('120');
    });

    it('refuses a post without a valid CSRF token (403, no redirect, no token), and a token used twice', async () => {
      const hidden = await form({ scope: 'sasl_auth', state: 's' });
      // A browser's post (it sends Origin): without a token it is refused. form-dropin.test.ts has the posts no browser sent.
      const forged = await browser.post('/oauth/authorization_token', { ...hidden, csrf_token: undefined, username: 'ann@localhost', password: 'ann-pw' }, { origin: 'null', 'sec-fetch-site': 'same-origin' });
      expect(forged.status).to.equal(403);
      expect(forged.location).to.equal(undefined);
      expect(forged.text).to.contain('expired or was not issued by this server');
      const tampered = await browser.post('/oauth/authorization_token', { ...hidden, scope: 'service:admin', username: 'ann@localhost', password: 'ann-pw' });
      expect(tampered.status).to.equal(403);
      const first = await browser.post('/oauth/authorization_token', { ...hidden, username: 'ann@localhost', password: 'ann-pw' });
      expect(first.status).to.equal(302);
      const replay = await browser.post('/oauth/authorization_token', { ...hidden, username: 'ann@localhost', password: 'ann-pw' });
      expect(replay.status).to.equal(403);
    });

    it('shows the form again with an error for a wrong password, and redirects access_denied for Deny', async () => {
      const hidden = await form({ scope: 'sasl_auth', state: 's' });
      const wrong = await browser.post('/oauth/authorization_token', { ...hidden, username: 'ben@localhost', password: 'nope' });
      expect(wrong.status).to.equal(400);
      expect(wrong.location).to.equal(undefined);
      expect(wrong.text).to.contain('wrong JID or password');
      expect(wrong.text).to.contain('value="ben@localhost"');
      const again = hiddenFields(wrong.text);
      const denied = await browser.post('/oauth/authorization_token', { ...again, deny: '1' });
      expect(denied.status).to.equal(302);
      expect(denied.location!.searchParams.get('error')).to.equal('access_denied');
      expect(denied.location!.searchParams.get('state')).to.equal('s');
    });

    it('tells an account that oauth_access denies so, rather than calling the password wrong', async () => {
      const hidden = await form({ scope: 'sasl_auth', state: 's' });
      const page = await browser.post('/oauth/authorization_token', { ...hidden, username: 'dora@localhost', password: 'dora-pw' });
      expect(page.status).to.equal(302);
      expect(page.location!.searchParams.get('error')).to.equal('access_denied');
      expect(page.location!.searchParams.get('error_description')).to.match(/not allowed to obtain OAuth tokens/);
    });
  });

  describe('POST /oauth/token, password grant', () => {
    const post = (fields: Record<string, string | undefined>, headers: Record<string, string> = {}) => browser.post('/oauth/token', { grant_type: 'password', ...fields }, headers);

    it('issues a token to a registered client authenticated by HTTP Basic or in the body', async () => {
      for (const [fields, headers] of [
        [{}, basicAuth('backend', 's3cret+/=')],
        [{ client_id: 'backend', client_secret: 's3cret+/=' }, {}],
      ] as const) {
        const res = await post({ ...fields, username: 'ben@localhost', password: 'ben-pw', scope: 'user_resources sasl_auth' }, headers);
        expect(res.status, res.text).to.equal(200);
        expect(res.headers.get('cache-control')).to.equal('no-store');
        const body = JSON.parse(res.text);
        expect(body).to.include({ token_type: 'bearer', expires_in: 3600, scope: 'user_resources sasl_auth' });
        expect((await t.api('user_resources', {}, { headers: bearer(body.access_token) })).status).to.equal(200);
      }
    });

    it('answers invalid_client with 401 and WWW-Authenticate for an unknown client, a wrong secret or none', async () => {
      for (const [fields, headers] of [
        [{}, basicAuth('backend', 'wrong')],
        [{ client_id: 'nobody', client_secret: 'x' }, {}],
        [{}, {}],
      ] as const) {
        const res = await post({ ...fields, username: 'ben@localhost', password: 'ben-pw', scope: 'sasl_auth' }, headers);
        expect(res.status).to.equal(401);
        expect(res.headers.get('www-authenticate')).to.match(/^Basic /);
        expect(res.headers.get('cache-control')).to.equal('no-store');
        expect(JSON.parse(res.text).error).to.equal('invalid_client');
      }
    });

    it('answers invalid_grant, invalid_scope, unsupported_grant_type and invalid_request as RFC 6749 says', async () => {
      const auth = basicAuth('backend', 's3cret+/=');
      const cases: Array<[Record<string, string | undefined>, number, string]> = [
        [{ username: 'ben@localhost', password: 'wrong', scope: 'sasl_auth' }, 400, 'invalid_grant'],
        [{ username: 'ben@localhost', password: 'ben-pw', scope: 'get_roster' }, 400, 'invalid_scope'],
        [{ username: 'ben@localhost', password: 'ben-pw', scope: 'sasl_auth', grant_type: 'urn:example:magic' }, 400, 'unsupported_grant_type'],
        [{ username: 'ben@localhost', scope: 'sasl_auth' }, 400, 'invalid_request'],
        [{ username: 'ben@localhost', password: 'ben-pw', scope: 'sasl_auth', grant_type: undefined }, 400, 'invalid_request'],
      ];
      for (const [fields, status, error] of cases) {
        const res = await browser.post('/oauth/token', { grant_type: 'password', ...fields }, auth);
        expect(res.status, res.text).to.equal(status);
        expect(JSON.parse(res.text).error, res.text).to.equal(error);
        expect(JSON.parse(res.text).error_description).to.be.a('string');
      }
      const json = await browser.get('/oauth/token');
      expect(json.status).to.equal(405);
    });

    it('says invalid_grant with the reason when oauth_access denies the account', async () => {
      const res = await post({ username: 'dora@localhost', password: 'dora-pw', scope: 'sasl_auth' }, basicAuth('backend', 's3cret+/='));
      expect(res.status).to.equal(400);
      expect(JSON.parse(res.text).error_description).to.match(/not allowed to obtain OAuth tokens/);
    });

    it('refuses further attempts on an account after too many failures, even with the right password (429)', async () => {
      const auth = basicAuth('backend', 's3cret+/=');
      for (let i = 0; i < 5; i++) expect((await post({ username: 'gus@localhost', password: `guess${i}`, scope: 'sasl_auth' }, auth)).status).to.equal(400);
      const blocked = await post({ username: 'gus@localhost', password: 'gus-pw', scope: 'sasl_auth' }, auth);
      expect(blocked.status).to.equal(429);
      expect(Number(blocked.headers.get('retry-after'))).to.be.greaterThan(0);
      expect(JSON.parse(blocked.text).error_description).to.match(/too many failed logins/);
      // Another account is not affected.
      expect((await post({ username: 'ben@localhost', password: 'ben-pw', scope: 'sasl_auth' }, auth)).status).to.equal(200);
    });
  });

  describe('authorization code with PKCE (oidc-provider)', () => {
    async function authorize(user: string, scope = 'user_resources sasl_auth', challenge = pkce()): Promise<{ code: string; verifier: string; redirect: URL }> {
      const start = await browser.get(
        `/oauth/authorize?${authorizeQuery({ response_type: 'code', client_id: 'webapp', redirect_uri: APP, scope, state: 'cs', code_challenge: challenge.challenge, code_challenge_method: 'S256' })}`,
      );
      const login = await browser.follow(start);
      expect(login.status, login.text).to.equal(200);
      expect(login.text).to.contain('Web App');
      const done = await browser.follow(await browser.post(new URL(login.text.match(/action="([^"]+)"/)![1]!, t.url('/')).pathname, { ...hiddenFields(login.text), username: `${user}@localhost`, password: `${user}-pw` }));
      expect(done.location, done.text).to.not.equal(undefined);
      expect(done.location!.origin + done.location!.pathname).to.equal(APP);
      expect(done.location!.searchParams.get('state')).to.equal('cs');
      return { code: done.location!.searchParams.get('code')!, verifier: challenge.verifier, redirect: done.location! };
    }
    const exchange = (fields: Record<string, string>) => browser.post('/oauth/token', { client_id: 'webapp', ...fields });

    it('issues a code after login and consent, and tokens for the code and its verifier', async () => {
      const { code, verifier } = await authorize('hal');
      expect(code).to.be.a('string');
      const res = await exchange({ grant_type: 'authorization_code', code, redirect_uri: APP, code_verifier: verifier });
      expect(res.status, res.text).to.equal(200);
      const body = JSON.parse(res.text);
      expect(body.scope).to.equal('user_resources sasl_auth');
      expect(body.refresh_token).to.be.a('string');
      const api = await t.api('user_resources', {}, { headers: bearer(body.access_token) });
      expect(api.status, api.text).to.equal(200);
      // The code is good once.
      expect((await exchange({ grant_type: 'authorization_code', code, redirect_uri: APP, code_verifier: verifier })).status).to.equal(400);
    });

    it('refuses a wrong verifier, and an authorization request without PKCE', async () => {
      const { code } = await authorize('hal');
      const res = await exchange({ grant_type: 'authorization_code', code, redirect_uri: APP, code_verifier: pkce().verifier });
      expect(res.status).to.equal(400);
      expect(JSON.parse(res.text).error).to.equal('invalid_grant');
      const plain = await browser.get(`/oauth/authorize?${authorizeQuery({ response_type: 'code', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth', state: 'p' })}`);
      expect(plain.status).to.be.oneOf([302, 303]);
      expect(plain.location!.searchParams.get('error')).to.equal('invalid_request');
    });

    it('rotates refresh tokens, and a reused one revokes the whole grant', async () => {
      const { code, verifier } = await authorize('hal');
      const first = JSON.parse((await exchange({ grant_type: 'authorization_code', code, redirect_uri: APP, code_verifier: verifier })).text);
      const second = JSON.parse((await exchange({ grant_type: 'refresh_token', refresh_token: first.refresh_token })).text);
      expect(second.access_token).to.be.a('string').and.not.equal(first.access_token);
      expect(second.refresh_token).to.be.a('string').and.not.equal(first.refresh_token);
      expect((await t.api('user_resources', {}, { headers: bearer(second.access_token) })).status).to.equal(200);
      const reuse = await exchange({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
      expect(reuse.status).to.equal(400);
      expect(JSON.parse(reuse.text).error).to.equal('invalid_grant');
      expect((await t.api('user_resources', {}, { headers: bearer(second.access_token) })).status).to.equal(401);
      expect((await exchange({ grant_type: 'refresh_token', refresh_token: second.refresh_token })).status).to.equal(400);
    });

    it('redirects invalid_scope for a scope of a module that is not enabled', async () => {
      const start = await browser.get(
        `/oauth/authorize?${authorizeQuery({ response_type: 'code', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth get_roster', state: 'q', code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`,
      );
      const end = await browser.follow(start);
      expect(end.location, `${end.status} ${end.text}`).to.not.equal(undefined);
      expect(end.location!.origin + end.location!.pathname).to.equal(APP);
      expect(end.location!.searchParams.get('error')).to.equal('invalid_scope');
      expect(end.location!.searchParams.get('state')).to.equal('q');
    });
  });

  describe('client_credentials (oidc-provider)', () => {
    it('gives a confidential client a token of its own, good for what api_permissions grants it and no account command', async () => {
      // Its scopes include an account command, which api_permissions lets such tokens run: it still may not.
      const res = await browser.post('/oauth/token', { grant_type: 'client_credentials', scope: 'status user_resources' }, basicAuth('backend', 's3cret+/='));
      expect(res.status, res.text).to.equal(200);
      const body = JSON.parse(res.text);
      expect(body.token_type).to.match(/^bearer$/i);
      expect((await t.api('status', {}, { headers: bearer(body.access_token) })).status).to.equal(200);
      const account = await t.api('user_resources', { user: 'ann', host: 'localhost' }, { headers: bearer(body.access_token) });
      expect(account.status).to.equal(403);
      expect(account.body.message).to.match(/belongs to no account/);
    });

    it('refuses a wrong secret with invalid_client, an unknown scope with invalid_scope', async () => {
      const wrong = await browser.post('/oauth/token', { grant_type: 'client_credentials', scope: 'status' }, basicAuth('backend', 'nope'));
      expect(wrong.status).to.equal(401);
      expect(JSON.parse(wrong.text).error).to.equal('invalid_client');
      const scope = await browser.post('/oauth/token', { grant_type: 'client_credentials', scope: 'get_roster' }, basicAuth('backend', 's3cret+/='));
      expect(scope.status).to.equal(400);
      expect(JSON.parse(scope.text).error).to.equal('invalid_scope');
    });
  });

  describe('revocation and introspection', () => {
    const issue = async (user: string, scopes = ['user_resources']) =>
      (await t.api('oauth_issue_token', { jid: `${user}@localhost`, ttl: 600, scopes }, { basic: ADMIN })).body.token as string;
    const introspect = (token: string, headers = basicAuth('backend', 's3cret+/=')) => browser.post('/oauth/introspect', { token }, headers);

    it('introspects tokens of every flow for a confidential client', async () => {
      const token = await issue('ivy');
      const res = await introspect(token);
      expect(res.status).to.equal(200);
      const body = JSON.parse(res.text);
      expect(body).to.include({ active: true, scope: 'user_resources', username: 'ivy@localhost', sub: 'ivy@localhost', token_type: 'Bearer' });
      expect(body.exp - body.iat).to.equal(600);
      expect(JSON.parse((await introspect('not-a-token')).text)).to.deep.equal({ active: false });
      const publicClient = await browser.post('/oauth/introspect', { token, client_id: 'webapp' });
      expect(publicClient.status).to.equal(401);
    });

    it('revokes a token at once (RFC 7009), with the look-up cache on', async () => {
      const token = await issue('ivy');
      expect((await t.api('user_resources', {}, { headers: bearer(token) })).status).to.equal(200);
      const res = await browser.post('/oauth/revoke', { token });
      expect(res.status).to.equal(200);
      const after = await t.api('user_resources', {}, { headers: bearer(token) });
      expect(after.status).to.equal(401);
      expect(after.headers.get('www-authenticate')).to.equal('Bearer error="invalid_token"');
      expect(after.body.code).to.equal(10);
      expect(JSON.parse((await introspect(token)).text).active).to.equal(false);
      // Unknown tokens are answered the same way.
      expect((await browser.post('/oauth/revoke', { token: 'whatever' })).status).to.equal(200);
    });

    it("refuses to revoke, for a client, a token issued to another client", async () => {
      const res = await browser.post('/oauth/token', { grant_type: 'password', username: 'ivy@localhost', password: 'ivy-pw', scope: 'sasl_auth' }, basicAuth('backend', 's3cret+/='));
      const token = JSON.parse(res.text).access_token as string;
      const other = await browser.post('/oauth/revoke', { token, client_id: 'webapp' });
      expect(other.status).to.equal(400);
      expect(JSON.parse(other.text).error).to.equal('unauthorized_client');
      const anonymous = await browser.post('/oauth/revoke', { token });
      expect(anonymous.status).to.equal(401);
      expect((await browser.post('/oauth/revoke', { token }, basicAuth('backend', 's3cret+/='))).status).to.equal(200);
      expect(JSON.parse((await introspect(token)).text).active).to.equal(false);
    });
  });

  it('publishes RFC 8414 metadata listing every flow', async () => {
    const res = await browser.get('/oauth/.well-known/oauth-authorization-server');
    expect(res.status).to.equal(200);
    const doc = JSON.parse(res.text);
    expect(doc.issuer).to.equal(`http://localhost:${t.port}/oauth`);
    expect(doc.token_endpoint).to.equal(`${doc.issuer}/token`);
    expect(doc.grant_types_supported).to.include.members(['authorization_code', 'refresh_token', 'client_credentials', 'password', 'implicit']);
    expect(doc.code_challenge_methods_supported).to.deep.equal(['S256']);
    expect(doc.scopes_supported).to.include.members(['sasl_auth', 'service:admin', 'status']);
    expect(doc.scopes_supported).to.not.include('get_roster');
  });

  it('never writes a token, a code or a password to the log', async () => {
    const form: Page = await browser.get(`/oauth/authorization_token?${authorizeQuery({ response_type: 'token', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth' })}`);
    const page = await browser.post('/oauth/authorization_token', { ...hiddenFields(form.text), username: 'ann@localhost', password: 'ann-pw' });
    const token = page.location!.searchParams.get('access_token')!;
    const grant = JSON.parse((await browser.post('/oauth/token', { grant_type: 'password', username: 'ben@localhost', password: 'ben-pw', scope: 'sasl_auth' }, basicAuth('backend', 's3cret+/='))).text);
    const log = JSON.stringify(t.logs);
    for (const secret of [token, grant.access_token, 'ann-pw', 'ben-pw', 's3cret+/=']) expect(log).to.not.contain(secret);
    expect(t.logs.some((l) => /OAuth token granted/.test(String(l.msg)))).to.equal(true);
  });
});

describe('OAuth endpoints under oauth_client_id_check', () => {
  for (const [check, expectations] of [
    ['allow', { anonymous: 200, unknown: 200, wrongSecret: 401, form: 200 }],
    ['deny', { anonymous: 401, unknown: 401, wrongSecret: 401, form: 400 }],
  ] as const) {
    it(`${check}: password grant and form for clients registered or not`, async () => {
      const t = await TestServer.start(endpointsConfig({ oauth_client_id_check: check }));
      try {
        await t.bootstrapAdmin();
        await t.server.services.accounts.register('ann', 'localhost', 'ann-pw');
        await t.api('oauth_add_client_password', { client_id: 'backend', client_name: 'Backend', secret: 'pw' }, { basic: ADMIN });
        const browser = new Browser(t.url('/'));
        const grant = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
          browser.post('/oauth/token', { grant_type: 'password', username: 'ann@localhost', password: 'ann-pw', scope: 'sasl_auth', ...fields }, headers);
        expect((await grant({})).status).to.equal(expectations.anonymous);
        expect((await grant({ client_id: 'unregistered' })).status).to.equal(expectations.unknown);
        expect((await grant({}, basicAuth('backend', 'wrong'))).status).to.equal(expectations.wrongSecret);
        const form = await browser.get(`/oauth/authorization_token?${authorizeQuery({ response_type: 'token', client_id: 'anyapp', redirect_uri: APP, scope: 'sasl_auth' })}`);
        expect(form.status).to.equal(expectations.form);
      } finally {
        await t.stop();
      }
    });
  }
});
