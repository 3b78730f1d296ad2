/**
 * The /oauth endpoints' answers where they used to be misleading or off the RFCs: the form's ttl, bodies over
 * the OAuth limit, the code flow's token errors (named problems, one invalid_client challenge,
 * unauthorized_client), wrong methods on oidc-provider's routes, the metadata, and scopes (each once, never a
 * command-line-only command, none at all refused everywhere).
 */
import { expect } from 'chai';
import { Browser, authorizeCode, basicAuth, hiddenFields, pkce, redeemCode, type CodeFlowOptions } from '../support/oauth-client.js';
import { oauthConfig } from '../support/oauth-config.js';
import { TestServer } from '../support/server.js';

const ADMIN = 'admin@localhost:adminpass';
const APP = 'https://app.example/cb';
const SECRET = 'backsecret';

describe('OAuth protocol details', () => {
  let t: TestServer;
  let browser: Browser;
  const admin = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
  const formQuery = (extra: Record<string, string> = {}) =>
    `/oauth/authorization_token?${new URLSearchParams({ response_type: 'token', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth', state: 's1', ...extra })}`;
  const flow: CodeFlowOptions = { clientId: 'webapp', redirectUri: APP, scope: 'sasl_auth', login: { jid: 'ann@localhost', password: 'ann-pw' } };

  before(async () => {
    const config = oauthConfig();
    (config.listen as Array<Record<string, unknown>>)[0]!.request_handlers = { '/api': 'mod_http_api', '/oauth': 'service_oauth' };
    config.api_permissions = { ...(config.api_permissions as object), monitoring: { who: { oauth: { scope: 'status', access: 'all' } }, what: ['status'] } };
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    await t.server.services.accounts.register('ann', 'localhost', 'ann-pw');
    expect((await admin('oauth_add_client_implicit', { client_id: 'webapp', client_name: 'Web App', redirect_uri: APP })).status).to.equal(200);
    expect((await admin('oauth_add_client_password', { client_id: 'backend', client_name: 'Backend', secret: SECRET })).status).to.equal(200);
  });
  beforeEach(() => {
    browser = new Browser(t.url('/'));
  });
  after(() => t?.stop());

  describe('the form and ttl (audit §8)', () => {
    it('honours a ttl field posted with the form, as ejabberd\'s form sends it', async () => {
      const form = await browser.get(formQuery());
      expect(form.status).to.equal(200);
      const page = await browser.post('/oauth/authorization_token', { ...hiddenFields(form.text), ttl: '60', username: 'ann@localhost', password: 'ann-pw' });
      expect(page.status, page.text).to.equal(302);
      expect(page.location!.searchParams.get('access_token')).to.be.a('string');
      expect(page.location!.searchParams.get('expires_in')).to.equal('60');
    });

    it('refuses a bad ttl in the query before showing the form: a redirect with invalid_request', async () => {
      for (const ttl of ['-1', 'abc', '0', '1.5']) {
        const page = await browser.get(formQuery({ ttl }));
        expect(page.status, ttl).to.equal(302);
        expect(page.text).to.not.match(/name="password"/);
        expect(page.location!.origin + page.location!.pathname).to.equal(APP);
        expect(page.location!.searchParams.get('error')).to.equal('invalid_request');
        expect(page.location!.searchParams.get('error_description')).to.contain(`ttl must be a positive number of seconds, got '${ttl}'`);
        expect(page.location!.searchParams.get('state')).to.equal('s1');
      }
    });

    it('caps a huge ttl by oauth_expire, on the form and in the password grant', async () => {
      const huge = '99999999999999999999999';
      const form = await browser.get(formQuery({ ttl: huge }));
      expect(form.status).to.equal(200);
      const page = await browser.post('/oauth/authorization_token', { ...hiddenFields(form.text), username: 'ann@localhost', password: 'ann-pw' });
      expect(page.location!.searchParams.get('expires_in')).to.equal('3600');
      const grant = await browser.post('/oauth/token', { grant_type: 'password', username: 'ann@localhost', password: 'ann-pw', scope: 'sasl_auth', ttl: huge }, basicAuth('backend', SECRET));
      expect(grant.status, grant.text).to.equal(200);
      expect(JSON.parse(grant.text).expires_in).to.equal(3600);
    });
  });

  describe('a body over the OAuth limit (audit §9)', () => {
    const big = `grant_type=password&username=${'a'.repeat(70 * 1024)}`;
    it('is an RFC 6749 invalid_request with no-store on the token endpoint, naming the OAuth limit', async () => {
      const res = await fetch(t.url('/oauth/token'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...basicAuth('backend', SECRET) }, body: big });
      expect(res.status).to.equal(413);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      expect(await res.json()).to.deep.equal({ error: 'invalid_request', error_description: 'the request body exceeds 65536 bytes, the limit of the OAuth endpoints' });
    });

    it('is an HTML error page on the form', async () => {
      const res = await fetch(t.url('/oauth/authorization_token'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: big });
      expect(res.status).to.equal(413);
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
      expect(await res.text()).to.contain('Authorization error').and.contain('65536 bytes, the limit of the OAuth endpoints');
    });
  });

  describe('token errors of the code flow (audit §10)', () => {
    const exchange = (fields: Record<string, string>, headers: Record<string, string> = {}) => browser.post('/oauth/token', fields, headers);
    const errorOf = async (fields: Record<string, string>, headers: Record<string, string> = {}) => {
      const res = await exchange(fields, headers);
      return { status: res.status, body: JSON.parse(res.text) as { error: string; error_description: string }, challenge: res.headers.get('www-authenticate') };
    };

    it('names the problem of a code: PKCE, a missing verifier, another redirect_uri, a reused code', async () => {
      const redeem = (code: string, fields: Record<string, string>) => errorOf({ grant_type: 'authorization_code', code, client_id: 'webapp', redirect_uri: APP, ...fields });
      let c = await authorizeCode(browser, t.url('/'), flow);
      expect((await redeem(c.code, { code_verifier: pkce().verifier })).body).to.deep.equal({
        error: 'invalid_grant',
        error_description: 'PKCE verification failed: code_verifier does not match the code_challenge of the authorization request',
      });
      c = await authorizeCode(browser, t.url('/'), flow);
      expect((await redeem(c.code, {})).body.error_description).to.equal('code_verifier is missing: PKCE is required');
      c = await authorizeCode(browser, t.url('/'), flow);
      expect((await redeem(c.code, { code_verifier: c.verifier, redirect_uri: 'https://app.example/other' })).body.error_description).to.equal(
        'redirect_uri differs from the one of the authorization request',
      );
      c = await authorizeCode(browser, t.url('/'), flow);
      expect((await redeemCode(browser, flow, c.code, c.verifier)).status).to.equal(200);
      const reused = await redeem(c.code, { code_verifier: c.verifier });
      expect(reused.status).to.equal(400);
      expect(reused.body).to.deep.equal({ error: 'invalid_grant', error_description: 'the authorization code was used already; the tokens issued for it are revoked' });
    });

    it('names a reused refresh token', async () => {
      const c = await authorizeCode(browser, t.url('/'), flow);
      const { body } = await redeemCode(browser, flow, c.code, c.verifier);
      expect((await exchange({ grant_type: 'refresh_token', refresh_token: body.refresh_token, client_id: 'webapp' })).status).to.equal(200);
      const reused = await errorOf({ grant_type: 'refresh_token', refresh_token: body.refresh_token, client_id: 'webapp' });
      expect(reused.body.error_description).to.equal('the refresh token was used already (each is good once): the whole grant is revoked');
    });

    it('answers invalid_client with one WWW-Authenticate challenge of the realm service_oauth, with or without Basic', async () => {
      for (const [fields, headers] of [
        [{ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'nosuch' }, {}],
        [{ grant_type: 'client_credentials', scope: 'status' }, basicAuth('backend', 'wrong')],
        [{ grant_type: 'client_credentials', scope: 'status' }, basicAuth('nosuch', 'x')],
      ] as Array<[Record<string, string>, Record<string, string>]>) {
        const res = await errorOf(fields, headers);
        expect(res.status, JSON.stringify(fields)).to.equal(401);
        expect(res.body.error).to.equal('invalid_client');
        expect(res.challenge).to.equal('Basic realm="service_oauth", error="invalid_client"');
      }
      // The password grant's challenge is the same.
      const password = await errorOf({ grant_type: 'password', username: 'ann@localhost', password: 'ann-pw', scope: 'sasl_auth' }, basicAuth('backend', 'wrong'));
      expect(password.challenge).to.equal('Basic realm="service_oauth", error="invalid_client"');
    });

    it('answers unauthorized_client for a grant type the client is not registered for', async () => {
      const res = await errorOf({ grant_type: 'client_credentials', scope: 'status', client_id: 'webapp' });
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal({ error: 'unauthorized_client', error_description: "the client 'webapp' is not registered for grant_type 'client_credentials'" });
    });
  });

  describe('wrong methods on oidc-provider routes (audit §11)', () => {
    it('answers 405 with Allow: an HTML page on /oauth/authorize, JSON on /oauth/jwks', async () => {
      const authorize = await browser.post('/oauth/authorize', { a: 'b' });
      expect(authorize.status).to.equal(405);
      expect(authorize.headers.get('allow')).to.equal('GET');
      expect(authorize.headers.get('content-type')).to.match(/^text\/html/);
      expect(authorize.text).to.contain('POST is not served here');
      const jwks = await browser.post('/oauth/jwks', { a: 'b' });
      expect(jwks.status).to.equal(405);
      expect(jwks.headers.get('allow')).to.equal('GET');
      expect(JSON.parse(jwks.text)).to.deep.equal({ error: 'invalid_request', error_description: 'POST is not served here: use GET' });
      expect((await browser.get('/oauth/jwks')).status).to.equal(200);
    });
  });

  describe('metadata (audit §12)', () => {
    it('lists for the authorization endpoint the response types and modes it serves', async () => {
      const doc = JSON.parse((await browser.get('/oauth/.well-known/oauth-authorization-server')).text);
      expect(doc.response_types_supported).to.deep.equal(['code']);
      expect(doc.response_modes_supported).to.deep.equal(['query', 'fragment', 'form_post']);
      const token = await browser.get(`/oauth/authorize?${new URLSearchParams({ response_type: 'token', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth', state: 'x' })}`);
      // Its default response mode for a token would be the fragment.
      expect(new URLSearchParams(token.location!.hash.slice(1)).get('error')).to.equal('unsupported_response_type');
      // fragment, as listed, is served.
      const { challenge } = pkce();
      const fragment = await browser.follow(
        await browser.get(`/oauth/authorize?${new URLSearchParams({ response_type: 'code', response_mode: 'fragment', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth', state: 'f', code_challenge: challenge, code_challenge_method: 'S256', prompt: 'none' })}`),
      );
      expect(fragment.location!.hash).to.match(/^#.*error=login_required/);
    });
  });

  describe('scopes (audit §13)', () => {
    it('grants a scope given twice once, in oauth_issue_token and in its listing', async () => {
      const res = await admin('oauth_issue_token', { jid: 'ann@localhost', ttl: 60, scopes: ['sasl_auth', 'sasl_auth'] });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.scopes).to.deep.equal(['sasl_auth']);
      const v0 = await t.api('oauth_issue_token', { jid: 'ann@localhost', ttl: 60, scopes: 'sasl_auth;sasl_auth' }, { basic: ADMIN, prefix: '/api/v0' });
      expect(v0.body.scopes).to.equal('sasl_auth');
      const listed = (await admin('oauth_list_tokens', {})).body as Array<{ scope: string }>;
      expect(listed.map((l) => l.scope)).to.not.include('sasl_auth sasl_auth');
    });

    it('refuses command-line-only commands as scopes everywhere, and does not advertise them', async () => {
      for (const scope of ['help', 'mnesia_change', 'mnesia_info_ctl', 'print_sql_schema']) {
        const issued = await admin('oauth_issue_token', { jid: 'ann@localhost', ttl: 60, scopes: [scope] });
        expect(issued.status, scope).to.equal(400);
        expect(issued.body.message).to.contain(`invalid_scope: '${scope}' is not a scope of this server`);
        const grant = await browser.post('/oauth/token', { grant_type: 'password', username: 'ann@localhost', password: 'ann-pw', scope }, basicAuth('backend', SECRET));
        expect(JSON.parse(grant.text).error, scope).to.equal('invalid_scope');
        const form = await browser.get(formQuery({ scope }));
        expect(form.location!.searchParams.get('error'), scope).to.equal('invalid_scope');
      }
      const doc = JSON.parse((await browser.get('/oauth/.well-known/oauth-authorization-server')).text);
      expect(doc.scopes_supported).to.include('status').and.to.not.include.members(['help']);
      for (const scope of ['help', 'mnesia_change', 'mnesia_info_ctl', 'print_sql_schema']) expect(doc.scopes_supported).to.not.include(scope);
    });

    it('refuses client_credentials without a scope with invalid_scope, like the other grants', async () => {
      const res = await browser.post('/oauth/token', { grant_type: 'client_credentials' }, basicAuth('backend', SECRET));
      expect(res.status).to.equal(400);
      expect(JSON.parse(res.text).error).to.equal('invalid_scope');
      const ok = await browser.post('/oauth/token', { grant_type: 'client_credentials', scope: 'status status' }, basicAuth('backend', SECRET));
      expect(ok.status, ok.text).to.equal(200);
      expect(JSON.parse(ok.text).scope).to.equal('status');
    });
  });
});
