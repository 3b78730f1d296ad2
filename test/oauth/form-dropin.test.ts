/**
 * The authorization form as a drop-in for ejabberd's: scripts and applications written for ejabberd POST the
 * spec's fields (username, password, response_type=token, client_id, redirect_uri, scope, state) straight to
 * /oauth/authorization_token, with no form fetched first and so no CSRF token. They get the redirect with the
 * token. A browser's POST still needs the token of our form, and one that another site's page sent is
 * refused even with a token (which anyone can fetch with the form): that is how login CSRF would come.
 */
import { expect } from 'chai';
import { Browser, hiddenFields, pkce, type Page } from '../support/oauth-client.js';
import { TestServer, type RawConfig } from '../support/server.js';
import { oauthConfig } from '../support/oauth-config.js';

const ADMIN = 'admin@localhost:adminpass';
const APP = 'https://app.example/callback';

function dropinConfig(): RawConfig {
  const config = oauthConfig();
  (config.listen as Array<Record<string, unknown>>)[0]!.request_handlers = { '/api': 'mod_http_api', '/oauth': 'service_oauth' };
  return config;
}

/** Headers a browser sends with a form it submits, by where the page that holds the form comes from. */
const NAVIGATION = { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-user': '?1', 'upgrade-insecure-requests': '1' };
const FROM_ELSEWHERE: Array<[string, Record<string, string>]> = [
  ['Chrome, a page elsewhere', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', ...NAVIGATION }],
  ['Chrome, a page elsewhere that sends no referrer', { origin: 'null', 'sec-fetch-site': 'cross-site', ...NAVIGATION }],
  ['a sibling host', { origin: 'https://other.app.example', 'sec-fetch-site': 'same-site', ...NAVIGATION }],
  ['a hidden frame elsewhere', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' }],
  ['Origin only (Safari before Fetch Metadata)', { origin: 'https://evil.example' }],
  ['Origin null only (a sandboxed frame)', { origin: 'null' }],
  ['Sec-Fetch-Site only', { 'sec-fetch-site': 'cross-site' }],
  ['Upgrade-Insecure-Requests only (Firefox before it sent Origin with a POST)', { 'upgrade-insecure-requests': '1' }],
];

describe('the authorization form, posted straight as to ejabberd', () => {
  let t: TestServer;
  let ours: string;

  before(async () => {
    t = await TestServer.start(dropinConfig());
    await t.bootstrapAdmin();
    for (const user of ['ann', 'ben']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    expect((await t.api('oauth_add_client_implicit', { client_id: 'webapp', client_name: 'Web App', redirect_uri: APP }, { basic: ADMIN })).status).to.equal(200);
    ours = t.url('');
  });
  after(() => t?.stop());

  /** A POST as a script writes it: the body by hand, nothing but Content-Type, redirects not followed. */
  async function post(body: string, headers: Record<string, string> = {}): Promise<Page> {
    const res = await fetch(t.url('/oauth/authorization_token'), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
    const location = res.headers.get('location');
    return { status: res.status, headers: res.headers, text: await res.text(), location: location ? new URL(location) : undefined };
  }
  const fields = (extra: Record<string, string> = {}) =>
    new URLSearchParams({ username: 'ann@localhost', password: 'ann-pw', response_type: 'token', client_id: 'webapp', redirect_uri: APP, scope: 'user_resources sasl_auth', state: 'xyz', ...extra }).toString();
  const tokenCount = async () => ((await t.api('oauth_list_tokens', {}, { basic: ADMIN })).body as unknown[]).length;
  const worksOnApi = async (token: string) => (await t.api('user_resources', {}, { authorization: `Bearer ${token}` })).status;

  describe('from a script or an application', () => {
    it("gets the spec's redirect: access_token, token_type=bearer, expires_in, scope joined with '+', state; the token works as Bearer", async () => {
      const before = await tokenCount();
      // Written by hand, as an ejabberd script does: '+' between the scopes, '%40' in the JID.
      const page = await post(`username=ann%40localhost&password=ann-pw&response_type=token&client_id=webapp&redirect_uri=${encodeURIComponent(APP)}&scope=user_resources+sasl_auth&state=xyz`);
      expect(page.status, page.text).to.equal(302);
      const raw = page.headers.get('location')!;
      expect(raw.startsWith(`${APP}?`), raw).to.equal(true);
      expect(raw).to.match(/[?&]access_token=[A-Za-z0-9_-]{43}(&|$)/);
      expect(raw).to.match(/[?&]token_type=bearer(&|$)/);
      expect(raw).to.match(/[?&]expires_in=3600(&|$)/);
      expect(raw).to.match(/[?&]scope=user_resources\+sasl_auth(&|$)/);
      expect(raw).to.match(/[?&]state=xyz(&|$)/);
      expect(page.headers.get('cache-control')).to.equal('no-store');
      const token = page.location!.searchParams.get('access_token')!;
      expect(await worksOnApi(token)).to.equal(200);
      expect(await tokenCount()).to.equal(before + 1);
      // The token is ann's and holds only what was asked for.
      const other = await t.api('user_resources', { user: 'ben', host: 'localhost' }, { authorization: `Bearer ${token}` });
      expect(other.status).to.equal(403);
    });

    it("takes the scopes joined with an encoded '+', the optional ttl, no state, and Node's fetch with its Sec-Fetch-Mode", async () => {
      const page = await post(`${fields({ ttl: '120' }).replace(/&state=xyz/, '').replace(/scope=[^&]*/, 'scope=user_resources%2Bsasl_auth')}`, { 'sec-fetch-mode': 'cors', 'user-agent': 'python-requests/2.31' });
      expect(page.status, page.text).to.equal(302);
      expect(page.location!.searchParams.get('expires_in')).to.equal('120');
      expect(page.location!.searchParams.get('scope')).to.equal('user_resources sasl_auth');
      expect(page.headers.get('location')).to.match(/[?&]state=(&|$)/);
      expect(await worksOnApi(page.location!.searchParams.get('access_token')!)).to.equal(200);
    });

    it('gets the answers of the form for its mistakes: a wrong password, an unknown client, a scope, Deny, a stale token', async () => {
      const wrong = await post(fields({ password: 'nope' }));
      expect(wrong.status).to.equal(400);
      expect(wrong.location).to.equal(undefined);
      expect(wrong.text).to.contain('wrong JID or password');
      const client = await post(fields({ client_id: 'nosuchapp' }));
      expect(client.status).to.equal(400);
      expect(client.location).to.equal(undefined);
      const scope = await post(fields({ scope: 'sasl_auth get_roster' }));
      expect(scope.status).to.equal(302);
      expect(scope.location!.searchParams.get('error')).to.equal('invalid_scope');
      expect(scope.location!.searchParams.get('state')).to.equal('xyz');
      const deny = await post(fields({ deny: '1' }));
      expect(deny.status).to.equal(302);
      expect(deny.location!.searchParams.get('error')).to.equal('access_denied');
      expect(deny.location!.searchParams.has('access_token')).to.equal(false);
      // A token that is sent must be good, from a script too: a form scraped and then altered is refused.
      const form = await new Browser(t.url('/')).get(`/oauth/authorization_token?${new URLSearchParams({ response_type: 'token', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth', state: 'xyz' })}`);
      const altered = await post(new URLSearchParams({ ...hiddenFields(form.text), scope: 'service:admin', username: 'ann@localhost', password: 'ann-pw' }).toString());
      expect(altered.status).to.equal(403);
      expect(altered.location).to.equal(undefined);
    });
  });

  describe('from a browser', () => {
    it('refuses a post without the form token, for every mark a browser puts on it, and checks no password', async () => {
      // The same fields without those marks get a token: the refusals below come from the marks alone.
      const delivered = await post(fields());
      expect(delivered.status).to.equal(302);
      expect(delivered.location!.searchParams.get('access_token')).to.have.length(43);
      const before = await tokenCount();
      for (const [name, headers] of [...FROM_ELSEWHERE, ['our own origin, without the token', { origin: ours, 'sec-fetch-site': 'same-origin', ...NAVIGATION }] as [string, Record<string, string>]]) {
        const page = await post(fields(), headers);
        expect(page.status, name).to.equal(403);
        expect(page.location, name).to.equal(undefined);
        expect(page.headers.get('location'), name).to.equal(null);
        // The person sees the request and may send it from our page: the form again, with a token of its own.
        expect(hiddenFields(page.text).csrf_token, name).to.be.a('string');
        expect(page.text).to.contain('Web App');
        // The password was not even checked: a wrong one gets the same 403, not "wrong JID or password".
        const wrong = await post(fields({ username: 'ben@localhost', password: 'guess' }), headers);
        expect(wrong.status, name).to.equal(403);
        expect(wrong.text, name).to.not.contain('wrong JID or password');
      }
      expect(await tokenCount()).to.equal(before);
    });

    it("refuses another site's post even with a good token, which anyone can fetch with the form", async () => {
      // The attacker fetches our form from its own server, and puts the token in a form on its page.
      const form = await new Browser(t.url('/')).get(`/oauth/authorization_token?${new URLSearchParams({ response_type: 'token', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth', state: 'xyz' })}`);
      const body = new URLSearchParams({ ...hiddenFields(form.text), username: 'ben@localhost', password: 'ben-pw' }).toString();
      for (const [name, headers] of FROM_ELSEWHERE.filter(([, h]) => h['sec-fetch-site'])) {
        const page = await post(body, headers);
        expect(page.status, name).to.equal(403);
        expect(page.location, name).to.equal(undefined);
        expect(page.text, name).to.contain('sent from another site');
      }
      // The refusals did not spend the token: from our own page it still works.
      const own = await post(body, { origin: 'null', 'sec-fetch-site': 'same-origin', ...NAVIGATION });
      expect(own.status, own.text).to.equal(302);
      expect(own.location!.searchParams.get('access_token')).to.have.length(43);
    });

    it('takes our own form from our page, as browsers send it (Origin null or ours), and its Deny', async () => {
      const browser = new Browser(t.url('/'));
      const query = new URLSearchParams({ response_type: 'token', client_id: 'webapp', redirect_uri: APP, scope: 'user_resources sasl_auth', state: 'own' });
      for (const origin of ['null', ours]) {
        const form = await browser.get(`/oauth/authorization_token?${query}`, { 'sec-fetch-site': 'cross-site', ...NAVIGATION });
        expect(form.status).to.equal(200);
        const page = await browser.post('/oauth/authorization_token', { ...hiddenFields(form.text), username: 'ann@localhost', password: 'ann-pw', accept: '1' }, { origin, 'sec-fetch-site': 'same-origin', ...NAVIGATION });
        expect(page.status, `${origin}: ${page.text}`).to.equal(302);
        expect(page.location!.origin + page.location!.pathname).to.equal(APP);
        expect(page.location!.searchParams.get('state')).to.equal('own');
        expect(page.headers.get('location')).to.match(/[?&]scope=user_resources\+sasl_auth(&|$)/);
        expect(await worksOnApi(page.location!.searchParams.get('access_token')!)).to.equal(200);
      }
      // A browser that sends no Fetch Metadata, only Origin: the token decides.
      const form = await browser.get(`/oauth/authorization_token?${query}`);
      const old = await browser.post('/oauth/authorization_token', { ...hiddenFields(form.text), username: 'ann@localhost', password: 'ann-pw' }, { origin: ours });
      expect(old.status).to.equal(302);
      // The person reloads the answer (Sec-Fetch-Site: none is the person's own doing); the token is spent.
      const reload = await browser.post('/oauth/authorization_token', { ...hiddenFields(form.text), username: 'ann@localhost', password: 'ann-pw' }, { origin: 'null', 'sec-fetch-site': 'none', ...NAVIGATION });
      expect(reload.status).to.equal(403);
      expect(reload.text).to.contain('has expired');
      const deny = await browser.post('/oauth/authorization_token', { ...hiddenFields(reload.text), deny: '1' }, { origin: 'null', 'sec-fetch-site': 'same-origin', ...NAVIGATION });
      expect(deny.status).to.equal(302);
      expect(deny.location!.searchParams.get('error')).to.equal('access_denied');
    });

    it("refuses a post to the code flow's login page from another site, or without its token, and takes our own", async () => {
      const browser = new Browser(t.url('/'));
      const { challenge } = pkce();
      const start = await browser.get(`/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth', state: 'c', code_challenge: challenge, code_challenge_method: 'S256' })}`);
      const login = await browser.follow(start);
      expect(login.status).to.equal(200);
      const action = login.text.match(/action="([^"]+)"/)![1]!;
      const filled = { ...hiddenFields(login.text), username: 'ann@localhost', password: 'ann-pw' };
      const foreign = await browser.post(action, filled, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', ...NAVIGATION });
      expect(foreign.status).to.equal(403);
      expect(foreign.text).to.contain('sent from another site');
      // This page is only ever our form: no token is no post, browser or not.
      const tokenless = await browser.post(action, { ...filled, csrf_token: undefined });
      expect(tokenless.status).to.equal(403);
      const own = await browser.follow(await browser.post(action, filled, { origin: 'null', 'sec-fetch-site': 'same-origin', ...NAVIGATION }));
      expect(own.location!.searchParams.get('code'), `${own.status} ${own.text.slice(0, 200)}`).to.be.a('string');
    });
  });
});
