/**
 * OAuth storage on each database (SQLite, MariaDB, PostgreSQL; TEST_DATABASES narrows): tokens, clients, and
 * oidc-provider's models (sign-in sessions, grants, authorization codes, refresh tokens), exercised through the
 * real endpoints and commands, and across a restart. The databases differ where it matters to OAuth: how text
 * keys compare (MariaDB's default collations ignore case and trailing spaces) and how big integers come back
 * (PostgreSQL gives strings).
 */
import { expect } from 'chai';
import { authorizeCode, basicAuth, Browser, hiddenFields, redeemCode, type CodeFlowOptions } from '../support/oauth-client.js';
import { oauthConfig } from '../support/oauth-config.js';
import { serverSqlConfig, TestServer, type RawConfig } from '../support/server.js';
import { testDatabases } from '../support/databases.js';

const ADMIN = 'admin@localhost:adminpass';
const APP = 'https://app.example/callback';
const CLIENT_DIALECT = { sqlite: 'better-sqlite3', mysql: 'mysql2', pgsql: 'pg' } as const;

function config(sql: RawConfig): RawConfig {
  const base = oauthConfig();
  (base.listen as Array<Record<string, unknown>>)[0]!.request_handlers = { '/api': 'mod_http_api', '/oauth': 'service_oauth' };
  base.api_permissions = {
    ...(base.api_permissions as object),
    'monitoring apps': { who: { oauth: { scope: 'status', access: 'all' } }, what: ['status'] },
  };
  return { ...base, ...sql };
}

/** A letter-case twin of a random id: the same key to a case-insensitive collation, another one here. */
function otherCase(text: string): string {
  return [...text].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
}

for (const database of testDatabases()) {
  describe(`OAuth storage on ${database.name}`, function () {
    let t: TestServer;
    let sqlDatabase: string;
    const admin = (command: string, args: Record<string, unknown> = {}) => t.api(command, args, { basic: ADMIN });
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const webapp: CodeFlowOptions = { clientId: 'webapp', redirectUri: APP, scope: 'user_resources sasl_auth', login: { jid: 'ann@localhost', password: 'ann-pw' } };
    const rows = (table: string, where: Record<string, unknown> = {}) => t.server.services.storage.db()(table).where(where).count({ n: '*' }).first().then((r) => Number(r?.n));

    before(async () => {
      const settings = await database.settings('/tmp');
      sqlDatabase = settings.database;
      t = await TestServer.start(config(serverSqlConfig(settings)));
      await t.bootstrapAdmin();
      for (const user of ['ann', 'ben', 'cid']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
      expect((await admin('oauth_add_client_implicit', { client_id: 'webapp', client_name: 'Web App', redirect_uri: APP })).status).to.equal(200);
      expect((await admin('oauth_add_client_password', { client_id: 'backend', client_name: 'Backend', secret: 's3cret' })).status).to.equal(200);
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    it(`keeps the OAuth tables in the ${database.name} database`, async () => {
      const knex = t.server.services.storage.db();
      expect(knex.client.config.client).to.equal(CLIENT_DIALECT[database.name]);
      if (database.name !== 'sqlite') expect(knex.client.config.connection.database).to.equal(sqlDatabase);
      expect(await rows('oauth_clients')).to.equal(2);
    });

    it('issues, lists and revokes tokens with the commands; a public id is matched exactly', async () => {
      const issued = await admin('oauth_issue_token', { jid: 'ann@localhost', ttl: 600, scopes: ['user_resources', 'sasl_auth'] });
      expect(issued.status, issued.text).to.equal(200);
      const token = issued.body.token as string;
      expect((await t.api('user_resources', {}, { headers: bearer(token) })).status).to.equal(200);
      const listed = (await admin('oauth_list_tokens')).body as Array<Record<string, string>>;
      const mine = listed.filter((l) => l.user === 'ann@localhost' && l.scope === 'user_resources sasl_auth');
      expect(mine).to.have.length(1);
      expect(Number(mine[0]!.expires_in)).to.be.within(590, 600);
      const id = mine[0]!.token!;
      expect(await rows('oauth_tokens', { id })).to.equal(1);

      // The same id in other letters, or with a space after it, is another id: nothing is revoked.
      for (const other of [otherCase(id), `${id} `]) {
        const twin = await admin('oauth_revoke_token', { token: other });
        expect(twin.status, `${JSON.stringify(other)}: ${twin.text}`).to.equal(404);
      }
      expect((await t.api('user_resources', {}, { headers: bearer(token) })).status).to.equal(200);
      // Nor is the token in other letters the token.
      expect((await t.api('user_resources', {}, { headers: bearer(otherCase(token)) })).status).to.equal(401);

      expect((await admin('oauth_revoke_token', { token: id })).status).to.equal(200);
      expect((await t.api('user_resources', {}, { headers: bearer(token) })).status).to.equal(401);
      expect((await admin('oauth_revoke_token', { token: id })).status).to.equal(404);

      const second = (await admin('oauth_issue_token', { jid: 'ben@localhost', ttl: 60, scopes: ['sasl_auth'] })).body.token as string;
      expect((await admin('oauth_revoke_token', { token: second })).status).to.equal(200);
      expect(await rows('oauth_tokens', { username: 'ben' })).to.equal(0);
    });

    it('adds and removes clients; client ids are matched exactly, letter case and trailing spaces included', async () => {
      const twin = await admin('oauth_add_client_implicit', { client_id: 'WebApp', client_name: 'Another App', redirect_uri: 'https://other.example/cb' });
      expect(twin.status, twin.text).to.equal(200);
      const browser = new Browser(t.url('/'));
      const form = (clientId: string, redirectUri: string) =>
        browser.get(`/oauth/authorization_token?${new URLSearchParams({ response_type: 'token', client_id: clientId, redirect_uri: redirectUri, scope: 'sasl_auth' })}`);
      expect((await form('webapp', APP)).text).to.contain('Web App');
      expect((await form('WebApp', 'https://other.example/cb')).text).to.contain('Another App');
      for (const id of ['WEBAPP', 'webapp ', 'webApp']) {
        const page = await form(id, APP);
        expect(page.status, JSON.stringify(id)).to.equal(400);
        expect(page.text).to.contain('is not a registered OAuth client');
      }
      // A client's token goes with it.
      const page = await browser.post('/oauth/authorization_token', { response_type: 'token', client_id: 'WebApp', redirect_uri: 'https://other.example/cb', scope: 'user_resources', username: 'ann@localhost', password: 'ann-pw' });
      expect(page.status, page.text).to.equal(302);
      const token = page.location!.searchParams.get('access_token')!;
      expect((await t.api('user_resources', {}, { headers: bearer(token) })).status).to.equal(200);
      expect(await rows('oauth_tokens', { client_id: 'WebApp' })).to.equal(1);
      expect(await rows('oauth_tokens', { client_id: 'webapp' })).to.equal(0);
      expect((await admin('oauth_remove_client', { client_id: 'WEBAPP' })).status).to.equal(404);
      expect((await admin('oauth_remove_client', { client_id: 'WebApp' })).status).to.equal(200);
      expect((await t.api('user_resources', {}, { headers: bearer(token) })).status).to.equal(401);
      expect((await form('webapp', APP)).status).to.equal(200);
      expect((await admin('oauth_remove_client', { client_id: 'WebApp' })).status).to.equal(404);
      expect((await admin('oauth_add_client_implicit', { client_id: 'webapp', client_name: 'Again', redirect_uri: APP })).status).to.equal(409);
      // An id with a space at either end would be another client on some databases and the same on others.
      for (const id of ['webapp ', ' webapp', 'new\tapp']) {
        const res = await admin('oauth_add_client_password', { client_id: id, client_name: 'Spaced', secret: 'x' });
        expect(res.status, JSON.stringify(id)).to.equal(400);
        expect(res.body.message).to.match(/client_id/);
      }
    });

    it("checks a password client's secret, in the password grant and client credentials", async () => {
      const browser = new Browser(t.url('/'));
      const grant = await browser.post('/oauth/token', { grant_type: 'password', username: 'ben@localhost', password: 'ben-pw', scope: 'sasl_auth user_resources' }, basicAuth('backend', 's3cret'));
      expect(grant.status, grant.text).to.equal(200);
      expect((await t.api('user_resources', {}, { headers: bearer(JSON.parse(grant.text).access_token) })).status).to.equal(200);
      for (const secret of ['S3CRET', 's3cret ', 'wrong']) {
        expect((await browser.post('/oauth/token', { grant_type: 'password', username: 'ben@localhost', password: 'ben-pw', scope: 'sasl_auth' }, basicAuth('backend', secret))).status, secret).to.equal(401);
      }
      expect((await browser.post('/oauth/token', { grant_type: 'password', username: 'ben@localhost', password: 'ben-pw', scope: 'sasl_auth' }, basicAuth('BACKEND', 's3cret'))).status).to.equal(401);
      const cc = await browser.post('/oauth/token', { grant_type: 'client_credentials', scope: 'status' }, basicAuth('backend', 's3cret'));
      expect(cc.status, cc.text).to.equal(200);
      expect((await t.api('status', {}, { headers: bearer(JSON.parse(cc.text).access_token) })).status).to.equal(200);
      expect(await rows('oauth_tokens', { kind: 'client_credentials', client_id: 'backend' })).to.equal(1);
    });

    it('runs the authorization code flow with PKCE: codes, sign-in sessions and grants kept here', async () => {
      const browser = new Browser(t.url('/'));
      const { code, verifier } = await authorizeCode(browser, t.url('/'), webapp);
      expect(await rows('oauth_models', { model: 'AuthorizationCode', username: 'ann' })).to.equal(1);
      expect(await rows('oauth_models', { model: 'Session', username: 'ann' })).to.be.at.least(1);
      expect(await rows('oauth_models', { model: 'Grant', username: 'ann', client_id: 'webapp' })).to.be.at.least(1);
      const wrong = await redeemCode(browser, webapp, code, otherCase(verifier));
      expect(wrong.status).to.equal(400);
      expect(wrong.body.error_description).to.match(/PKCE/);
      // The code flow again, for a code to redeem rightly.
      const again = await authorizeCode(browser, t.url('/'), webapp);
      const tokens = await redeemCode(browser, webapp, again.code, again.verifier);
      expect(tokens.status, JSON.stringify(tokens.body)).to.equal(200);
      expect((await t.api('user_resources', {}, { headers: bearer(tokens.body.access_token) })).status).to.equal(200);
      expect((await redeemCode(browser, webapp, again.code, again.verifier)).status).to.equal(400);
      // Its access token is revoked with the reused code.
      expect((await t.api('user_resources', {}, { headers: bearer(tokens.body.access_token) })).status).to.equal(401);
      // The sign-in session is found again by its cookie: straight back with a code, no login page.
      const third = await authorizeCode(browser, t.url('/'), { ...webapp, login: undefined });
      expect((await redeemCode(browser, webapp, third.code, third.verifier)).status).to.equal(200);
    });

    it('rotates refresh tokens, and a reused one revokes its grant', async () => {
      const browser = new Browser(t.url('/'));
      const { code, verifier } = await authorizeCode(browser, t.url('/'), webapp);
      const first = (await redeemCode(browser, webapp, code, verifier)).body;
      expect(first.refresh_token).to.be.a('string');
      const listed = (await admin('oauth_list_tokens')).body as Array<Record<string, string>>;
      expect(listed.filter((l) => l.user === 'ann@localhost').length).to.be.at.least(2);
      const refresh = (refreshToken: string) => browser.post('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'webapp' });
      const second = await refresh(first.refresh_token);
      expect(second.status, second.text).to.equal(200);
      const rotated = JSON.parse(second.text);
      expect(rotated.refresh_token).to.not.equal(first.refresh_token);
      const third = JSON.parse((await refresh(rotated.refresh_token)).text);
      expect((await t.api('user_resources', {}, { headers: bearer(third.access_token) })).status).to.equal(200);
      const reuse = await refresh(first.refresh_token);
      expect(reuse.status).to.equal(400);
      expect(JSON.parse(reuse.text).error_description).to.match(/used already/);
      expect((await t.api('user_resources', {}, { headers: bearer(third.access_token) })).status).to.equal(401);
      expect((await refresh(third.refresh_token)).status).to.equal(400);
    });

    it('introspects and revokes tokens of every flow at the endpoints', async () => {
      const browser = new Browser(t.url('/'));
      const introspect = async (token: string) => JSON.parse((await browser.post('/oauth/introspect', { token }, basicAuth('backend', 's3cret'))).text);
      const fromCommand = (await admin('oauth_issue_token', { jid: 'cid@localhost', ttl: 300, scopes: ['sasl_auth'] })).body.token as string;
      const form = await browser.get(`/oauth/authorization_token?${new URLSearchParams({ response_type: 'token', client_id: 'webapp', redirect_uri: APP, scope: 'user_resources', state: 's' })}`);
      const fromForm = (await browser.post('/oauth/authorization_token', { ...hiddenFields(form.text), username: 'cid@localhost', password: 'cid-pw' })).location!.searchParams.get('access_token')!;
      const { code, verifier } = await authorizeCode(browser, t.url('/'), { ...webapp, login: { jid: 'cid@localhost', password: 'cid-pw' } });
      const fromCode = (await redeemCode(browser, webapp, code, verifier)).body;
      for (const [name, token, kind] of [['command', fromCommand, 'access'], ['form', fromForm, 'access'], ['code', fromCode.access_token, 'access'], ['refresh', fromCode.refresh_token, 'refresh']] as const) {
        const before = await introspect(token);
        expect(before.active, name).to.equal(true);
        expect(before.username, name).to.equal('cid@localhost');
        expect(before.exp, name).to.be.a('number').greaterThan(Date.now() / 1000);
        expect(before.iat, name).to.be.a('number');
        expect((await browser.post('/oauth/revoke', { token })).status, name).to.equal(200);
        expect((await introspect(token)).active, `${name} (${kind})`).to.equal(false);
      }
      expect(await rows('oauth_tokens', { username: 'cid' })).to.equal(0);
      expect((await introspect(otherCase(fromCommand))).active).to.equal(false);
    });

    it('removing an account ends its tokens, sign-in sessions, grants and codes', async () => {
      const browser = new Browser(t.url('/'));
      const flow = { ...webapp, login: { jid: 'ben@localhost', password: 'ben-pw' } };
      const first = await authorizeCode(browser, t.url('/'), flow);
      const tokens = (await redeemCode(browser, flow, first.code, first.verifier)).body;
      const pending = await authorizeCode(browser, t.url('/'), { ...flow, login: undefined });
      expect(await rows('oauth_models', { username: 'ben' })).to.be.at.least(3);
      expect((await admin('unregister', { user: 'ben', host: 'localhost' })).status).to.equal(200);
      expect(await rows('oauth_models', { username: 'ben' })).to.equal(0);
      expect(await rows('oauth_tokens', { username: 'ben' })).to.equal(0);
      expect((await t.api('user_resources', {}, { headers: bearer(tokens.access_token) })).status).to.equal(401);
      expect((await redeemCode(browser, flow, pending.code, pending.verifier)).status).to.equal(400);
      const refreshed = await browser.post('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'webapp' });
      expect(refreshed.status).to.equal(400);
    });

    it('purges expired tokens and models, comparing the stored times as numbers', async () => {
      const short = (await admin('oauth_issue_token', { jid: 'ann@localhost', ttl: 1, scopes: ['sasl_auth'] })).body.token as string;
      const long = (await admin('oauth_issue_token', { jid: 'ann@localhost', ttl: 600, scopes: ['user_resources'] })).body.token as string;
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const oauth = t.server.services.oauth;
      expect(await oauth.tokens.lookup(short)).to.not.equal(undefined);
      expect(await oauth.tokens.purgeExpired()).to.be.at.least(1);
      expect(await oauth.tokens.lookup(short)).to.equal(undefined);
      expect(await oauth.tokens.lookup(long)).to.not.equal(undefined);
      await oauth.models.upsert('Interaction', 'expired-interaction', { uid: 'expired-interaction' }, 0);
      await oauth.models.upsert('Interaction', 'live-interaction', { uid: 'live-interaction' }, 600);
      expect(await oauth.models.find('Interaction', 'expired-interaction')).to.equal(undefined);
      expect(await oauth.models.purgeExpired()).to.be.at.least(1);
      expect(await oauth.models.findByUid('Interaction', 'live-interaction')).to.deep.include({ uid: 'live-interaction' });
    });

    it('keeps tokens, clients, sign-ins and refresh tokens across a restart', async () => {
      const browser = new Browser(t.url('/'));
      const { code, verifier } = await authorizeCode(browser, t.url('/'), webapp);
      const tokens = (await redeemCode(browser, webapp, code, verifier)).body;
      const issued = (await admin('oauth_issue_token', { jid: 'ann@localhost', ttl: 600, scopes: ['user_resources'] })).body.token as string;
      expect((await admin('restart')).status).to.equal(200);
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = (await t.api('user_resources', {}, { headers: bearer(issued) }).catch(() => ({ status: 0 }))).status;
      }
      expect(status).to.equal(200);
      expect((await t.api('user_resources', {}, { headers: bearer(tokens.access_token) })).status).to.equal(200);
      const refreshed = await browser.post('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'webapp' });
      expect(refreshed.status, refreshed.text).to.equal(200);
      // Still signed in at the authorization server: straight back with a code.
      const again = await authorizeCode(browser, t.url('/'), { ...webapp, login: undefined });
      expect((await redeemCode(browser, webapp, again.code, again.verifier)).status).to.equal(200);
      expect((await admin('oauth_list_tokens')).body).to.be.an('array').that.is.not.empty;
    });
  });
}
