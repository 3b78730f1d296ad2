/**
 * Attacks on the HTML the OAuth endpoints serve: reflected XSS through every parameter a page echoes (the
 * authorization form and its re-display after an error, the error pages, the code flow's login page,
 * oidc-provider's error pages), the safety headers of every page (no framing, no loading, no sniffing, no
 * referrer, no caching), and redirect URIs a browser would run instead of leaving for (javascript:, data:…):
 * refused at registration, and never redirected to even when such a client is in the store from before.
 *
 * These pages take a person's password, so an injected script or a framed page would be a way to steal it.
 */
import { expect } from 'chai';
import { Browser, hiddenFields, pkce, type Page } from '../support/oauth-client.js';
import { TestServer, type RawConfig } from '../support/server.js';
import { oauthConfig } from '../support/oauth-config.js';

const ADMIN = 'admin@localhost:adminpass';
const APP = 'https://app.example/callback';
const NATIVE = 'com.example.app:/oauth-callback';

/** What an attacker puts in a parameter a page may echo: script, attribute breakout, URL schemes. */
const PAYLOADS = [
  `"><script>alert(1)</script>`,
  `'onmouseover='alert(1)`,
  `" onfocus="alert(1)" autofocus="`,
  'javascript:alert(1)',
  `</title></style><img src=x onerror=alert(1)>`,
  `&lt;script&gt;alert(1)&lt;/script&gt;`,
];
/** A client registered by an administrator with hostile metadata: what the pages show of it must be inert too. */
const HOSTILE_NAME = `"><script>alert('name')</script><svg onload=alert(1)>`;
const HOSTILE_REDIRECT = `https://app.example/cb?q="><script>alert('uri')</script>&r='onmouseover=alert(1)`;

function oauthServerConfig(extra: RawConfig = {}): RawConfig {
  const config = oauthConfig();
  (config.listen as Array<Record<string, unknown>>)[0]!.request_handlers = { '/api': 'mod_http_api', '/oauth': 'service_oauth' };
  return { ...config, ...extra };
}

function query(params: Record<string, string | undefined>): string {
  return new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString();
}

/** As pages.ts escapes: the test expects the payload back in exactly this form, which proves it was echoed. */
function escaped(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const TAGS = new Set(['html', 'head', 'meta', 'title', 'style', 'body', 'h1', 'p', 'ul', 'li', 'code', 'strong', 'label', 'input', 'form', 'div', 'button']);
const ATTRIBUTES = new Set(['lang', 'charset', 'name', 'content', 'type', 'value', 'id', 'for', 'autocomplete', 'required', 'method', 'action', 'class', 'role', 'formnovalidate']);

/**
 * The page holds only the markup the server writes: known elements, known attributes, each value in double
 * quotes, forms that post to this server. An echoed payload that broke out of its text or attribute would
 * add an element, an attribute (onmouseover=…) or an unquoted value.
 */
function expectInert(html: string, where: string): void {
  expect(html, where).to.not.match(/<script|<svg|<img|<iframe/i);
  // Every '<' opens an element: text is escaped, so a raw one elsewhere came from the request.
  expect(html.replace(/<style>[^<]*<\/style>/, ''), where).to.not.match(/<(?!\/?[a-z0-9]+[\s>]|!DOCTYPE html>)/i);
  for (const match of html.matchAll(/<(\/?)([a-zA-Z0-9!]+)([^>]*)>/g)) {
    const [tag, closing, name, rest] = match as unknown as [string, string, string, string];
    if (name === '!DOCTYPE') continue;
    expect(TAGS.has(name.toLowerCase()), `${where}: element <${name}> in ${tag}`).to.equal(true);
    if (closing) {
      expect(rest.trim(), `${where}: ${tag}`).to.equal('');
      continue;
    }
    expect(rest, `${where}: attributes of ${tag}`).to.match(/^(\s+[a-z-]+(="[^"]*")?)*\s*$/);
    for (const attr of rest.matchAll(/\s([a-z-]+)(?:="([^"]*)")?/g)) {
      expect(ATTRIBUTES.has(attr[1]!), `${where}: attribute ${attr[1]} in ${tag}`).to.equal(true);
      if (attr[1] === 'action') expect(attr[2], `${where}: form action`).to.match(/^\/oauth\//);
    }
  }
}

/** The headers every HTML page of the OAuth endpoints carries. */
function expectPageHeaders(page: Page, where: string, formAction?: string): void {
  expect(page.headers.get('content-type'), where).to.equal('text/html; charset=utf-8');
  const csp = page.headers.get('content-security-policy') ?? '';
  expect(csp, where).to.contain("default-src 'none'").and.to.contain("frame-ancestors 'none'").and.to.contain("base-uri 'none'");
  expect(csp, where).to.not.match(/script-src[^;]*unsafe/);
  if (formAction !== undefined) expect(csp, where).to.contain(`form-action ${formAction};`);
  expect(page.headers.get('x-frame-options'), where).to.equal('DENY');
  expect(page.headers.get('x-content-type-options'), where).to.equal('nosniff');
  expect(page.headers.get('referrer-policy'), where).to.equal('no-referrer');
  expect(page.headers.get('cache-control'), where).to.equal('no-store');
}

/** A redirect back to the client: to where it should go, with what it carries encoded, never cached. */
function expectSafeRedirect(page: Page, target: string, where: string): void {
  expect(page.status, `${where}: ${page.text.slice(0, 200)}`).to.be.oneOf([302, 303]);
  expect(page.location!.origin + page.location!.pathname, where).to.equal(target);
  const raw = page.headers.get('location')!;
  expect(raw, where).to.not.match(/[<>"' ]/);
  expect(page.headers.get('cache-control'), where).to.equal('no-store');
}

describe('OAuth pages under attack', () => {
  let t: TestServer;
  let browser: Browser;
  const add = (command: string, args: Record<string, string>) => t.api(command, args, { basic: ADMIN });

  before(async () => {
    t = await TestServer.start(oauthServerConfig());
    await t.bootstrapAdmin();
    await t.server.services.accounts.register('ann', 'localhost', 'ann-pw');
    expect((await add('oauth_add_client_implicit', { client_id: 'webapp', client_name: 'Web App', redirect_uri: APP })).status).to.equal(200);
    const hostile = await add('oauth_add_client_implicit', { client_id: 'hostile', client_name: HOSTILE_NAME, redirect_uri: HOSTILE_REDIRECT });
    expect(hostile.status, hostile.text).to.equal(200);
    expect((await add('oauth_add_client_implicit', { client_id: 'native', client_name: 'Native App', redirect_uri: NATIVE })).status).to.equal(200);
  });
  beforeEach(() => {
    browser = new Browser(t.url('/'));
  });
  after(() => t?.stop());

  const formPath = (params: Record<string, string | undefined>) =>
    `/oauth/authorization_token?${query({ response_type: 'token', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth', ...params })}`;

  describe('reflected XSS', () => {
    it('the authorization form escapes the state it carries, and the JID it shows again after a wrong password', async () => {
      for (const payload of PAYLOADS) {
        const form = await browser.get(formPath({ state: payload }));
        expect(form.status).to.equal(200);
        expect(form.text).to.contain(`name="state" value="${escaped(payload)}"`);
        expectInert(form.text, `form, state ${payload}`);
        expectPageHeaders(form, 'form', "'self' https://app.example");
        expect(hiddenFields(form.text).state).to.equal(payload);

        const wrong = await browser.post('/oauth/authorization_token', { ...hiddenFields(form.text), username: payload, password: 'nope' });
        expect(wrong.status, wrong.text).to.equal(400);
        expect(wrong.text).to.contain(`value="${escaped(payload)}"`);
        expectInert(wrong.text, `wrong password, username ${payload}`);
        expectPageHeaders(wrong, 'wrong password', "'self' https://app.example");
      }
    });

    it('the 403 pages (a form without its token, a form from another site) escape what the post carried', async () => {
      for (const payload of PAYLOADS) {
        const form = await browser.get(formPath({ state: payload }));
        const fields = { ...hiddenFields(form.text), username: payload, password: 'ann-pw' };
        const expired = await browser.post('/oauth/authorization_token', { ...fields, csrf_token: undefined }, { origin: 'null', 'sec-fetch-site': 'same-origin' });
        const foreign = await browser.post('/oauth/authorization_token', fields, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
        for (const [name, page] of [['expired', expired], ['foreign', foreign]] as const) {
          expect(page.status, name).to.equal(403);
          expect(page.text).to.contain(`value="${escaped(payload)}"`);
          expectInert(page.text, `${name}, ${payload}`);
          expectPageHeaders(page, name, "'self' https://app.example");
        }
      }
    });

    it('the error page escapes a client_id, a redirect_uri and a JID it names', async () => {
      for (const payload of PAYLOADS) {
        const client = await browser.get(formPath({ client_id: payload }));
        expect(client.status).to.equal(400);
        expect(client.location).to.equal(undefined);
        expect(client.text).to.contain(escaped(payload));
        expectInert(client.text, `unknown client ${payload}`);
        expectPageHeaders(client, 'error page', "'none'");

        const redirect = await browser.get(formPath({ redirect_uri: payload }));
        expect(redirect.status).to.equal(400);
        expect(redirect.location).to.equal(undefined);
        // Named whole when it is no URL at all; a javascript: URL is refused by its scheme.
        expect(redirect.text).to.contain(URL.canParse(payload) ? `&#39;javascript:&#39; is not allowed` : escaped(payload));
        expectInert(redirect.text, `redirect_uri ${payload}`);

        const mismatch = await browser.get(formPath({ redirect_uri: `https://app.example/${payload}` }));
        expect(mismatch.status).to.equal(400);
        expectInert(mismatch.text, `redirect_uri mismatch ${payload}`);

        // A JID that is not one: the form again, naming it.
        const form = await browser.get(formPath({ state: 's' }));
        const malformed = await browser.post('/oauth/authorization_token', { ...hiddenFields(form.text), username: `${payload}@`, password: 'x' });
        expect(malformed.status).to.equal(400);
        expectInert(malformed.text, `malformed JID ${payload}`);
      }
      const notForm = await browser.post('/oauth/authorization_token', { x: '<script>alert(1)</script>' }, { 'content-type': 'text/plain;<script>' });
      expect(notForm.status).to.equal(400);
      expectInert(notForm.text, 'not a form');
      expectPageHeaders(notForm, 'not a form', "'none'");
      const put = await fetch(t.url('/oauth/authorization_token'), { method: 'PUT' });
      expect(put.status).to.equal(405);
      expectInert(await put.text(), 'PUT');
    });

    it('errors sent back to the client carry the payload URL-encoded, never raw', async () => {
      for (const payload of PAYLOADS) {
        const ttl = await browser.get(formPath({ state: payload, ttl: payload }));
        expectSafeRedirect(ttl, APP, `ttl ${payload}`);
        expect(ttl.location!.searchParams.get('error')).to.equal('invalid_request');
        expect(ttl.location!.searchParams.get('state')).to.equal(payload);
        const type = await browser.get(formPath({ state: payload, response_type: payload }));
        expectSafeRedirect(type, APP, `response_type ${payload}`);
        expect(type.location!.searchParams.get('error_description')).to.contain(payload);
        const scope = await browser.get(formPath({ state: payload, scope: `sasl_auth ${payload}` }));
        expectSafeRedirect(scope, APP, `scope ${payload}`);
        expect(scope.location!.searchParams.get('error')).to.equal('invalid_scope');
        const code = await browser.get(`/oauth/authorize?${query({ response_type: 'code', client_id: 'webapp', redirect_uri: APP, scope: `sasl_auth ${payload}`, state: payload, code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`);
        expectSafeRedirect(code, APP, `code flow scope ${payload}`);
        expect(code.location!.searchParams.get('state')).to.equal(payload);
      }
    });

    it("an administrator's hostile client name and redirect URI are shown escaped, on the form and on the code flow's login page", async () => {
      const form = await browser.get(formPath({ client_id: 'hostile', redirect_uri: HOSTILE_REDIRECT, state: PAYLOADS[0] }));
      expect(form.status, form.text).to.equal(200);
      expect(form.text).to.contain(escaped(HOSTILE_NAME)).and.to.contain(escaped(HOSTILE_REDIRECT));
      expectInert(form.text, 'hostile client, form');
      expectPageHeaders(form, 'hostile client, form', "'self' https://app.example");
      // The form still works, and the token goes to exactly the registered URI.
      const done = await browser.post('/oauth/authorization_token', { ...hiddenFields(form.text), username: 'ann@localhost', password: 'ann-pw' });
      expect(done.status).to.equal(302);
      expect(done.location!.searchParams.get('q')).to.equal(`"><script>alert('uri')</script>`);
      expect(done.location!.searchParams.get('access_token')).to.have.length(43);

      for (const payload of PAYLOADS) {
        browser = new Browser(t.url('/'));
        const start = await browser.get(`/oauth/authorize?${query({ response_type: 'code', client_id: 'hostile', redirect_uri: HOSTILE_REDIRECT, scope: 'sasl_auth', state: payload, code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`);
        const page = await browser.follow(start);
        expect(page.status, page.text.slice(0, 300)).to.equal(200);
        expect(page.text).to.contain(escaped(HOSTILE_NAME));
        expectInert(page.text, 'code flow login page');
        expectPageHeaders(page, 'code flow login page', "'self' https://app.example");
      }
    });

    it("the code flow's login page escapes the JID it shows again, and its error pages what they name", async () => {
      const browser2 = new Browser(t.url('/'));
      const start = await browser2.get(`/oauth/authorize?${query({ response_type: 'code', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth', state: 's', code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`);
      const login = await browser2.follow(start);
      expect(login.status).to.equal(200);
      const action = login.text.match(/action="([^"]+)"/)![1]!;
      let fields = hiddenFields(login.text);
      for (const payload of PAYLOADS) {
        const wrong = await browser2.post(action, { ...fields, username: payload, password: 'nope' });
        expect(wrong.status, wrong.text).to.equal(400);
        expect(wrong.text).to.contain(`value="${escaped(payload)}"`);
        expectInert(wrong.text, `code flow, wrong password, ${payload}`);
        expectPageHeaders(wrong, 'code flow, wrong password', "'self' https://app.example");
        fields = hiddenFields(wrong.text);
      }
      for (const payload of PAYLOADS) {
        // A browser with no authorization in progress: nothing to resume.
        const browser2 = new Browser(t.url('/'));
        const pages: Array<[string, Page]> = [
          ['unknown client', await browser2.get(`/oauth/authorize?${query({ response_type: 'code', client_id: payload, redirect_uri: APP, scope: 'sasl_auth', state: payload, code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`)],
          ['wrong redirect_uri', await browser2.get(`/oauth/authorize?${query({ response_type: 'code', client_id: 'webapp', redirect_uri: payload, scope: 'sasl_auth', state: payload, code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`)],
          ['unknown interaction', await browser2.get(`/oauth/interaction/${encodeURIComponent(payload)}`)],
          ['resume of nothing', await browser2.get(`/oauth/authorize/${encodeURIComponent(payload)}`)],
        ];
        for (const [name, page] of pages) {
          expect(page.status, `${name}: ${page.text.slice(0, 200)}`).to.be.within(400, 499);
          expect(page.location, name).to.equal(undefined);
          expectInert(page.text, `${name}, ${payload}`);
          expectPageHeaders(page, name, "'none'");
        }
      }
    });

    it('JSON errors that echo a parameter are JSON, not to be sniffed as HTML', async () => {
      for (const payload of PAYLOADS) {
        const token = await browser.post('/oauth/token', { grant_type: payload });
        expect(token.status).to.equal(400);
        expect(JSON.parse(token.text).error_description).to.contain(payload);
        const missing = await browser.get(`/oauth/${encodeURIComponent(payload)}`);
        expect(missing.status).to.equal(404);
        for (const res of [token, missing]) {
          expect(res.headers.get('content-type')).to.match(/^application\/json/);
          expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
          expect(res.headers.get('cache-control')).to.equal('no-store');
        }
      }
    });

    it('under oauth_client_id_check: allow, an unregistered client_id and redirect_uri are shown escaped', async () => {
      const open = await TestServer.start(oauthServerConfig({ oauth_client_id_check: 'allow' }));
      try {
        const b = new Browser(open.url('/'));
        for (const payload of PAYLOADS) {
          const redirect = `https://app.example/cb?x=${payload}`;
          const form = await b.get(formPath({ client_id: payload, redirect_uri: redirect, state: payload }));
          expect(form.status, form.text).to.equal(200);
          expect(form.text).to.contain(`<strong>${escaped(payload)}</strong>`).and.to.contain(`value="${escaped(redirect)}"`);
          expectInert(form.text, `allow, ${payload}`);
          expectPageHeaders(form, 'allow', "'self' https://app.example");
        }
        // A redirect URI the registration would refuse is refused here too, before any page.
        for (const bad of ['javascript:alert(1)//', 'data:text/html,<script>alert(1)</script>', 'http://a";b/cb']) {
          const page = await b.get(formPath({ client_id: 'anyapp', redirect_uri: bad }));
          expect(page.status, bad).to.equal(400);
          expect(page.location).to.equal(undefined);
          expectInert(page.text, `allow, ${bad}`);
        }
      } finally {
        await open.stop();
      }
    });
  });

  describe('framing and the other safety headers', () => {
    it('every page of both flows, and every redirect, carries them', async () => {
      const b = new Browser(t.url('/'));
      const form = await b.get(formPath({ state: 's' }));
      expectPageHeaders(form, 'form', "'self' https://app.example");
      const done = await b.post('/oauth/authorization_token', { ...hiddenFields(form.text), username: 'ann@localhost', password: 'ann-pw' });
      expect(done.status).to.equal(302);
      expect(done.headers.get('cache-control')).to.equal('no-store');
      expect(done.headers.get('referrer-policy')).to.equal('no-referrer');
      expect(done.headers.get('x-content-type-options')).to.equal('nosniff');

      const nativeForm = await b.get(formPath({ client_id: 'native', redirect_uri: NATIVE }));
      expectPageHeaders(nativeForm, 'native form', "'self' com.example.app:");
      // CSP cannot name an IPv6 address: a loopback redirect to [::1] is allowed by its scheme.
      expect((await add('oauth_add_client_implicit', { client_id: 'loopback6', client_name: 'Loopback', redirect_uri: 'http://[::1]:41234/cb' })).status).to.equal(200);
      const loopbackForm = await b.get(formPath({ client_id: 'loopback6', redirect_uri: 'http://[::1]:41234/cb' }));
      expectPageHeaders(loopbackForm, 'IPv6 loopback form', "'self' http:");

      const start = await b.get(`/oauth/authorize?${query({ response_type: 'code', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth', state: 's', code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`);
      expect(start.headers.get('cache-control'), 'authorize redirect').to.equal('no-store');
      expect(start.headers.get('x-frame-options'), 'authorize redirect').to.equal('DENY');
      const login = await b.follow(start);
      expectPageHeaders(login, 'code flow login', "'self' https://app.example");
      const action = login.text.match(/action="([^"]+)"/)![1]!;
      const granted = await b.post(action, { ...hiddenFields(login.text), username: 'ann@localhost', password: 'ann-pw' });
      expect(granted.headers.get('cache-control'), 'interaction redirect').to.equal('no-store');
      const back = await b.follow(granted);
      expect(back.location!.searchParams.get('code')).to.be.a('string');
      expect(back.headers.get('cache-control'), 'redirect with the code').to.equal('no-store');

      // Signed in now: the consent page.
      const again = await b.follow(await b.get(`/oauth/authorize?${query({ response_type: 'code', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth user_resources', state: 's', code_challenge: pkce().challenge, code_challenge_method: 'S256', prompt: 'consent' })}`));
      expect(again.status, again.text.slice(0, 300)).to.equal(200);
      expect(again.text).to.contain('Signed in as');
      expectPageHeaders(again, 'consent page', "'self' https://app.example");
    });

    it("oidc-provider's form_post page cannot be framed, runs only its own script, and is not cached", async () => {
      const b = new Browser(t.url('/'));
      const start = await b.get(`/oauth/authorize?${query({ response_type: 'code', response_mode: 'form_post', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth', state: PAYLOADS[0], code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`);
      const login = await b.follow(start);
      const action = login.text.match(/action="([^"]+)"/)![1]!;
      const page = await b.follow(await b.post(action, { ...hiddenFields(login.text), username: 'ann@localhost', password: 'ann-pw' }));
      expect(page.status, page.text.slice(0, 300)).to.equal(200);
      expect(page.text).to.contain(`action="${APP}"`).and.to.match(/name="code"/);
      // The state comes back escaped by oidc-provider.
      expect(page.text).to.not.contain(PAYLOADS[0]);
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(csp).to.contain("frame-ancestors 'none'").and.to.match(/script-src 'sha256-[^' ]+'(;|$)/);
      expect(csp).to.not.match(/script-src[^;]*unsafe/);
      expect(page.headers.get('x-frame-options')).to.equal('DENY');
      expect(page.headers.get('cache-control')).to.equal('no-store');
      expect(page.headers.get('x-content-type-options')).to.equal('nosniff');
    });
  });

  describe('redirect URIs a browser would not leave for', () => {
    const refused = [
      'javascript:alert(1)',
      'JavaScript:alert(document.cookie)//',
      ' javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      'blob:https://app.example/0c3b8c8e-1b5b-4b8a-9c1e-1a2b3c4d5e6f',
      'about:blank',
      'filesystem:https://app.example/temporary/x',
      'myapp:/callback',
      'https://app.example/callback#fragment',
      'https://app.example/callback#',
      '/callback',
      'https://user:password@app.example/callback',
      'http://app.example;evil/callback',
    ];

    it('refuses each at oauth_add_client_implicit with a 400 naming redirect_uri, and stores nothing', async () => {
      for (const [i, uri] of refused.entries()) {
        const res = await add('oauth_add_client_implicit', { client_id: `bad${i}`, client_name: 'Bad', redirect_uri: uri });
        expect(res.status, `${uri}: ${res.text}`).to.equal(400);
        expect(JSON.stringify(res.body), uri).to.contain('redirect_uri');
        expect(await t.server.services.oauth.clients.get(`bad${i}`), uri).to.equal(undefined);
      }
    });

    it('accepts https, http (loopback included) and private-use schemes named after a domain (RFC 8252)', async () => {
      for (const [i, uri] of ['https://app.example/cb', 'http://localhost:8080/cb', 'http://127.0.0.1:41234/cb', 'http://[::1]:41234/cb', 'com.example.app:/cb', 'org.example.app://callback/path'].entries()) {
        const res = await add('oauth_add_client_implicit', { client_id: `good${i}`, client_name: 'Good', redirect_uri: uri });
        expect(res.status, `${uri}: ${res.text}`).to.equal(200);
      }
    });

    it('delivers tokens and codes to a native application at its private-use scheme', async () => {
      const form = await browser.get(formPath({ client_id: 'native', redirect_uri: NATIVE, state: 'n' }));
      const done = await browser.post('/oauth/authorization_token', { ...hiddenFields(form.text), username: 'ann@localhost', password: 'ann-pw' });
      expect(done.status).to.equal(302);
      expect(done.headers.get('location')).to.match(/^com\.example\.app:\/oauth-callback\?access_token=/);

      const { verifier, challenge } = pkce();
      const start = await browser.get(`/oauth/authorize?${query({ response_type: 'code', client_id: 'native', redirect_uri: NATIVE, scope: 'sasl_auth', state: 'n', code_challenge: challenge, code_challenge_method: 'S256' })}`);
      const login = await browser.follow(start);
      expect(login.status, login.text.slice(0, 300)).to.equal(200);
      const action = login.text.match(/action="([^"]+)"/)![1]!;
      const back = await browser.follow(await browser.post(action, { ...hiddenFields(login.text), username: 'ann@localhost', password: 'ann-pw' }));
      expect(back.headers.get('location')).to.match(/^com\.example\.app:\/oauth-callback\?code=/);
      const code = back.location!.searchParams.get('code')!;
      const tokens = await browser.post('/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: NATIVE, client_id: 'native', code_verifier: verifier });
      expect(tokens.status, tokens.text).to.equal(200);
    });

    it('has no other way to register a client: no dynamic registration endpoint', async () => {
      const reg = await browser.post('/oauth/reg', { redirect_uris: 'javascript:alert(1)' });
      expect(reg.status).to.equal(404);
      const json = await fetch(t.url('/oauth/reg'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['javascript:alert(1)'] }) });
      expect(json.status).to.equal(404);
      const metadata = JSON.parse((await browser.get('/oauth/.well-known/oauth-authorization-server')).text);
      expect(metadata).to.not.have.property('registration_endpoint');
    });

    it('never redirects to one held by a client stored before, on the form or in the code flow', async () => {
      const db = t.server.services.storage.db();
      const stored = ['javascript:alert(1)//', 'data:text/html,<script>alert(1)</script>', 'vbscript:msgbox(1)', 'http://a";b/cb'];
      for (const [i, uri] of stored.entries()) {
        await db('oauth_clients').insert({ client_id: `legacy${i}`, client_name: 'Legacy', grant_type: 'implicit', redirect_uri: uri, secret_hash: null, created_at: Date.now() });
      }
      // The same requests for a good client are redirected: an invalid scope goes back to the client on both
      // endpoints, and a login on the form delivers the token.
      const good = await browser.get(formPath({ scope: 'no_such_scope' }));
      expectSafeRedirect(good, APP, 'good client, form');
      const goodCode = await browser.get(`/oauth/authorize?${query({ response_type: 'code', client_id: 'webapp', redirect_uri: APP, scope: 'no_such_scope', state: 's', code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`);
      expectSafeRedirect(goodCode, APP, 'good client, code flow');
      const goodPost = await browser.post('/oauth/authorization_token', { response_type: 'token', client_id: 'webapp', redirect_uri: APP, scope: 'sasl_auth', username: 'ann@localhost', password: 'ann-pw' });
      expectSafeRedirect(goodPost, APP, 'good client, posted fields');

      for (const [i, uri] of stored.entries()) {
        const client = `legacy${i}`;
        const attempts: Array<[string, Page]> = [
          ['form', await browser.get(formPath({ client_id: client, redirect_uri: uri }))],
          ['form, invalid scope', await browser.get(formPath({ client_id: client, redirect_uri: uri, scope: 'no_such_scope' }))],
          ['posted fields', await browser.post('/oauth/authorization_token', { response_type: 'token', client_id: client, redirect_uri: uri, scope: 'sasl_auth', username: 'ann@localhost', password: 'ann-pw' })],
          ['code flow', await browser.get(`/oauth/authorize?${query({ response_type: 'code', client_id: client, redirect_uri: uri, scope: 'sasl_auth', state: 's', code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`)],
          ['code flow, invalid scope', await browser.get(`/oauth/authorize?${query({ response_type: 'code', client_id: client, redirect_uri: uri, scope: 'no_such_scope', state: 's', code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`)],
        ];
        for (const [name, page] of attempts) {
          expect(page.status, `${uri}, ${name}: ${page.status} ${page.headers.get('location')} ${page.text.slice(0, 200)}`).to.be.within(400, 499);
          expect(page.text, `${uri}, ${name}`).to.match(name.startsWith('code flow') ? /registered for the client .* is not allowed/ : /redirect_uri/);
          expect(page.headers.get('location'), `${uri}, ${name}`).to.equal(null);
          expectInert(page.text, `${uri}, ${name}`);
        }
      }
      // Refused as a client error, not as a fault of the server.
      expect(t.logged((l) => /server error/i.test(String(l.msg)))).to.deep.equal([]);
    });
  });
});
