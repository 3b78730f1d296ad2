/**
 * Every way to a token asks again whether the account may have one, not only the login: after a change of
 * oauth_access, a ban, the account's removal (and the name registered again), a disabled module or a removed
 * client, the code flow's sign-in session, refresh tokens, outstanding codes and oauth_issue_token give
 * nothing that a fresh login would not.
 */
import { expect } from 'chai';
import { Browser, authorizeCode, authorizePath, hiddenFields, redeemCode, type CodeFlowOptions } from '../support/oauth-client.js';
import { oauthConfig } from '../support/oauth-config.js';
import { TestServer, type RawConfig } from '../support/server.js';

const ADMIN = 'admin@localhost:adminpass';
const APP = 'https://app.example/cb';
const MODULES = { mod_http_api: {}, mod_admin_extra: {}, mod_private: {} };

function config(options: { blocked?: string; modules?: Record<string, unknown> } = {}): RawConfig {
  const raw = oauthConfig();
  (raw.listen as Array<Record<string, unknown>>)[0]!.request_handlers = { '/api': 'mod_http_api', '/oauth': 'service_oauth' };
  raw.acl = { ...(raw.acl as object), blocked: { user: options.blocked ?? 'nobody@localhost' } };
  raw.access_rules = { oauth_ok: { deny: 'blocked', allow: 'all' } };
  raw.oauth_access = 'oauth_ok';
  raw.api_permissions = {
    ...(raw.api_permissions as object),
    'own roster': { who: { oauth: { scope: 'get_roster' } }, what: ['get_roster'] },
  };
  raw.modules = options.modules ?? MODULES;
  return raw;
}

describe('OAuth: every issuance checks the account', () => {
  let t: TestServer;
  const flow = (user: string, scope = 'sasl_auth service:user', clientId = 'webapp', redirectUri = APP): CodeFlowOptions => ({
    clientId,
    redirectUri,
    scope,
    login: { jid: `${user}@localhost`, password: `${user}-pw` },
  });
  const admin = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
  const reload = async (options: Parameters<typeof config>[0]) => {
    await t.writeConfig(config(options));
    const res = await admin('reload_config', {});
    expect(res.status, res.text).to.equal(200);
  };
  const refresh = (browser: Browser, refreshToken: string, fields: Record<string, string> = {}) =>
    browser.post('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'webapp', ...fields });
  /** Signs in with the code flow; the browser keeps the oauth_session cookie. */
  const signIn = async (user: string, scope?: string) => {
    const browser = new Browser(t.url('/'));
    const options = flow(user, scope);
    const { code, verifier } = await authorizeCode(browser, t.url('/'), options);
    const tokens = await redeemCode(browser, options, code, verifier);
    expect(tokens.status, JSON.stringify(tokens.body)).to.equal(200);
    return { browser, options, tokens: tokens.body };
  };
  /** /authorize with the browser's session and prompt=none: where it redirects to. */
  const silentAuthorize = async (browser: Browser, options: CodeFlowOptions) => {
    const page = await browser.follow(await browser.get(authorizePath(options, { prompt: 'none' }).path));
    expect(page.location, `${page.status} ${page.text.slice(0, 300)}`).to.not.equal(undefined);
    return page.location!;
  };

  before(async () => {
    t = await TestServer.start(config());
    await t.bootstrapAdmin();
    for (const user of ['carol', 'frank', 'hank', 'erin', 'ivan']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    expect((await admin('oauth_add_client_implicit', { client_id: 'webapp', client_name: 'Web App', redirect_uri: APP })).status).to.equal(200);
  });
  after(() => t?.stop());

  describe('oauth_access changed after the sign-in (audit §2)', () => {
    it('refuses the refresh grant, the sign-in session and oauth_issue_token, naming the rule', async () => {
      const { browser, options, tokens } = await signIn('carol');
      expect((await silentAuthorize(browser, options)).searchParams.get('code')).to.be.a('string');
      await reload({ blocked: 'carol@localhost' });
      try {
        const res = await refresh(browser, tokens.refresh_token);
        expect(res.status, res.text).to.equal(400);
        expect(JSON.parse(res.text)).to.deep.equal({
          error: 'invalid_grant',
          error_description: 'carol@localhost is not allowed to obtain OAuth tokens on this server (oauth_access: oauth_ok)',
        });
        for (const prompt of [{ prompt: 'none' }, {}] as Array<Record<string, string>>) {
          const page = await browser.follow(await browser.get(authorizePath(options, prompt).path));
          expect(page.location, page.text.slice(0, 300)).to.not.equal(undefined);
          expect(page.location!.origin + page.location!.pathname).to.equal(APP);
          expect(page.location!.searchParams.get('code')).to.equal(null);
          expect(page.location!.searchParams.get('error')).to.equal('access_denied');
          expect(page.location!.searchParams.get('error_description')).to.match(/carol@localhost is not allowed to obtain OAuth tokens.*oauth_access: oauth_ok/);
        }
        const issued = await admin('oauth_issue_token', { jid: 'carol@localhost', ttl: 60, scopes: ['sasl_auth'] });
        expect(issued.status, issued.text).to.equal(422);
        expect(issued.body.message).to.equal('no token for carol@localhost: carol@localhost is not allowed to obtain OAuth tokens on this server (oauth_access: oauth_ok)');
      } finally {
        await reload({});
      }
      // Allowed again, the same refresh token works: it was refused, not spent.
      expect((await refresh(browser, tokens.refresh_token)).status).to.equal(200);
    });

    it('refuses a code issued before the change when it is redeemed after it', async () => {
      const browser = new Browser(t.url('/'));
      const options = flow('carol');
      const { code, verifier } = await authorizeCode(browser, t.url('/'), options);
      await reload({ blocked: 'carol@localhost' });
      try {
        const res = await redeemCode(browser, options, code, verifier);
        expect(res.status).to.equal(400);
        expect(res.body.error).to.equal('invalid_grant');
        expect(res.body.error_description).to.match(/oauth_access: oauth_ok/);
      } finally {
        await reload({});
      }
    });
  });

  describe('a banned account (audit §3)', () => {
    it('gets no code through its sign-in session, and no tokens for a code it already had', async () => {
      const { browser, options, tokens } = await signIn('frank');
      const pending = await authorizeCode(browser, t.url('/'), options);
      const ban = await admin('ban_account', { user: 'frank', host: 'localhost', reason: 'audit ban' });
      expect(ban.status, ban.text).to.equal(200);
      const silent = await silentAuthorize(browser, options);
      expect(silent.searchParams.get('code')).to.equal(null);
      expect(silent.searchParams.get('error')).to.equal('access_denied');
      expect(silent.searchParams.get('error_description')).to.match(/banned/);
      const redeemed = await redeemCode(browser, options, pending.code, pending.verifier);
      expect(redeemed.status).to.equal(400);
      expect(redeemed.body.error).to.equal('invalid_grant');
      const refreshed = await refresh(browser, tokens.refresh_token);
      expect(refreshed.status).to.equal(400);
      expect(JSON.parse(refreshed.text).error).to.equal('invalid_grant');
      expect((await t.api('user_resources', {}, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).to.equal(401);
    });
  });

  describe('a removed account (audit §4)', () => {
    it('asks for a new login when the name was registered again, instead of consent for the new account', async () => {
      const { browser, options } = await signIn('hank');
      const pending = await authorizeCode(browser, t.url('/'), options);
      expect((await admin('unregister', { user: 'hank', host: 'localhost' })).status).to.equal(200);
      expect((await admin('register', { user: 'hank', host: 'localhost', password: 'NEWpw-other-person' })).status).to.equal(200);
      // The code issued to the old account is gone with it.
      const redeemed = await redeemCode(browser, options, pending.code, pending.verifier);
      expect(redeemed.status).to.equal(400);
      expect(redeemed.body.error).to.equal('invalid_grant');
      expect((await silentAuthorize(browser, options)).searchParams.get('error')).to.equal('login_required');
      const page = await browser.follow(await browser.get(authorizePath(options).path));
      expect(page.status).to.equal(200);
      expect(page.text).to.match(/type="password"/);
      expect(page.text).to.not.contain('Signed in as');
      // The old password does not get in; the new owner's does, and gets their tokens.
      await expectNoCode(browser, options);
      const fresh = await authorizeCode(browser, t.url('/'), { ...options, login: { jid: 'hank@localhost', password: 'NEWpw-other-person' } });
      expect((await redeemCode(browser, options, fresh.code, fresh.verifier)).status).to.equal(200);
    });

    it('asks for a new login, never a 500, when the account is gone', async () => {
      const { browser, options } = await signIn('erin');
      expect((await admin('unregister', { user: 'erin', host: 'localhost' })).status).to.equal(200);
      const silent = await silentAuthorize(browser, options);
      expect(silent.searchParams.get('error')).to.equal('login_required');
      const page = await browser.follow(await browser.get(authorizePath(options).path));
      expect(page.status, page.text.slice(0, 300)).to.equal(200);
      expect(page.text).to.match(/type="password"/);
      expect(t.logged((l) => l.msg === 'OAuth authorization server error')).to.have.length(0);
    });

    it('asks for a new login when the account row was replaced behind the hooks (registered after the sign-in)', async () => {
      const { browser, options, tokens } = await signIn('ivan');
      // As if the account had been removed and registered again without the remove_user hook.
      await t.server.services.storage.db()('users').where({ username: 'ivan', host: 'localhost' }).update({ created_at: Date.now() + 5000 });
      expect((await silentAuthorize(browser, options)).searchParams.get('error')).to.equal('login_required');
      const res = await refresh(browser, tokens.refresh_token);
      expect(res.status).to.equal(400);
      expect(JSON.parse(res.text).error_description).to.equal('the account ivan@localhost was registered again after this sign-in');
    });
  });

  describe('a module disabled after the grant (audit §5)', () => {
    it('answers invalid_scope to a refresh token whose scope is no longer a scope, and serves the ones that are', async () => {
      const { browser, tokens } = await signIn('carol', 'sasl_auth get_roster');
      expect(tokens.scope).to.equal('sasl_auth get_roster');
      await reload({ modules: { mod_http_api: {} } });
      try {
        const res = await refresh(browser, tokens.refresh_token);
        expect(res.status, res.text).to.equal(400);
        const body = JSON.parse(res.text);
        expect(body.error).to.equal('invalid_scope');
        expect(body.error_description).to.match(/'get_roster' is not a scope of this server/);
        const narrowed = await refresh(browser, tokens.refresh_token, { scope: 'sasl_auth' });
        expect(narrowed.status, narrowed.text).to.equal(200);
        expect(JSON.parse(narrowed.text).scope).to.equal('sasl_auth');
      } finally {
        await reload({});
      }
    });
  });

  describe('a removed client (audit §6)', () => {
    it('takes its outstanding codes with it: a client registered again under the same id cannot redeem them', async () => {
      const tmp = 'https://tmp.example/cb';
      expect((await admin('oauth_add_client_implicit', { client_id: 'tmpapp', client_name: 'Tmp', redirect_uri: tmp })).status).to.equal(200);
      const browser = new Browser(t.url('/'));
      const options = flow('carol', 'sasl_auth', 'tmpapp', tmp);
      const { code, verifier } = await authorizeCode(browser, t.url('/'), options);
      expect((await admin('oauth_remove_client', { client_id: 'tmpapp' })).status).to.equal(200);
      expect((await admin('oauth_add_client_implicit', { client_id: 'tmpapp', client_name: 'Tmp', redirect_uri: tmp })).status).to.equal(200);
      const res = await redeemCode(browser, options, code, verifier);
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal({ error: 'invalid_grant', error_description: 'the authorization code is unknown or was revoked' });
    });
  });

  async function expectNoCode(browser: Browser, options: CodeFlowOptions): Promise<void> {
    const page = await browser.follow(await browser.get(authorizePath(options).path));
    const action = new URL(page.text.match(/action="([^"]+)"/)![1]!, t.url('/')).pathname;
    const wrong = await browser.post(action, { ...hiddenFields(page.text), username: 'hank@localhost', password: 'hank-pw' });
    expect(wrong.status).to.equal(400);
    expect(wrong.text).to.contain('wrong JID or password');
  }
});
