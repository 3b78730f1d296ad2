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
