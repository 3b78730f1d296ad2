/**
 * A small browser for the OAuth endpoints: fetch without following redirects, a cookie jar, form posts,
 * hidden fields read from the HTML, and PKCE pairs.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface Page {
  status: number;
  headers: Headers;
  text: string;
  /** The Location header, resolved against the request URL. */
  location?: URL;
}

export class Browser {
  readonly #cookies = new Map<string, string>();

  constructor(private readonly base: string) {}

  async get(path: string, headers: Record<string, string> = {}): Promise<Page> {
    return this.#fetch(path, { method: 'GET', headers });
  }

  async post(path: string, fields: Record<string, string | undefined>, headers: Record<string, string> = {}): Promise<Page> {
    const body = new URLSearchParams(Object.entries(fields).filter((e): e is [string, string] => e[1] !== undefined)).toString();
    return this.#fetch(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
  }

  /** Follows redirects on this server only; stops at the first one that leaves it (the client's redirect_uri). */
  async follow(page: Page, limit = 10): Promise<Page> {
    let current = page;
    for (let i = 0; i < limit && current.location && current.location.origin === new URL(this.base).origin; i++) {
      current = await this.get(current.location.pathname + current.location.search);
    }
    return current;
  }

  async #fetch(path: string, init: RequestInit & { headers: Record<string, string> }): Promise<Page> {
    const url = new URL(path, this.base);
    const cookie = [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(cookie ? { cookie } : {}), ...init.headers } });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
    const location = res.headers.get('location');
    return { status: res.status, headers: res.headers, text: await res.text(), location: location ? new URL(location, url) : undefined };
  }
}

/** The hidden inputs of the first form in a page, by name. */
export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
    out[unescape(match[1]!)] = unescape(match[2]!);
  }
  return out;
}

function unescape(text: string): string {
  return text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))).replace(/&amp;/g, '&');
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function basicAuth(id: string, secret: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}` };
}

export interface CodeFlowOptions {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scope: string;
  /** `user@host` and password, for the login page; without them the browser must be signed in already. */
  readonly login?: { readonly jid: string; readonly password: string };
  readonly state?: string;
}

/** The authorization request of the code flow with a fresh PKCE pair, as a path below the server. */
export function authorizePath(options: CodeFlowOptions, extra: Record<string, string> = {}): { path: string; verifier: string } {
  const { verifier, challenge } = pkce();
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    scope: options.scope,
    state: options.state ?? 'st',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  });
  return { path: `/oauth/authorize?${query}`, verifier };
}

/**
 * Runs the authorization code flow in `browser` up to the redirect back to the client: the login page
 * (or the consent page when signed in), Accept. Returns the code and its verifier.
 */
export async function authorizeCode(browser: Browser, base: string, options: CodeFlowOptions): Promise<{ code: string; verifier: string }> {
  const { path, verifier } = authorizePath(options);
  const page = await browser.follow(await browser.get(path));
  // Signed in with this client's grant already: straight back with a code.
  const direct = page.location?.searchParams.get('code');
  if (direct) return { code: direct, verifier };
  if (page.status !== 200) throw new Error(`authorization page: ${page.status} ${page.location ?? page.text.slice(0, 300)}`);
  const action = new URL(page.text.match(/action="([^"]+)"/)![1]!.replace(/&amp;/g, '&'), base).pathname;
  const fields: Record<string, string> = { ...hiddenFields(page.text), accept: '1' };
  if (/name="password"/.test(page.text)) {
    if (!options.login) throw new Error('the authorization page asks for a login, and none was given');
    Object.assign(fields, { username: options.login.jid, password: options.login.password });
  }
  const done = await browser.follow(await browser.post(action, fields));
  const code = done.location?.searchParams.get('code');
  if (!code) throw new Error(`no code: ${done.status} ${done.location ?? done.text.slice(0, 300)}`);
  return { code, verifier };
}

/** Redeems a code at the token endpoint as a public client; the parsed answer and its status. */
export async function redeemCode(browser: Browser, options: CodeFlowOptions, code: string, verifier: string): Promise<{ status: number; body: Record<string, any> }> {
  const res = await browser.post('/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: options.redirectUri, client_id: options.clientId, code_verifier: verifier });
  return { status: res.status, body: JSON.parse(res.text) };
}
