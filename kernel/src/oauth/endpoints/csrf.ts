/**
 * CSRF tokens of the authorization form: `<issued>.<nonce>.<mac>`, an HMAC over the time, a nonce and the
 * authorization request the form was shown for. A POST must carry a token this process issued, for the same
 * request, less than `maxAge` seconds ago, and not used before: a page elsewhere cannot forge one, replay one,
 * or swap the client, redirect URI or scopes under the user's eyes. Stateless but for the set of used nonces.
 *
 * The token needs no cookie, so anyone can fetch a fresh one with the form. What keeps a page elsewhere from
 * submitting one in a visitor's browser (login CSRF: the visitor's application gets a token to the attacker's
 * account) is the browser's own word on where the form came from, `Sec-Fetch-Site`.
 *
 * The spec's authorization endpoint also takes its fields posted straight from a script or an application,
 * with no form shown before (ejabberd has no CSRF token): that is allowed when no browser sent the request.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const MAX_AGE_S = 600;

export const EXPIRED_FORM = 'This form has expired or was not issued by this server. Check the request and submit it again.';
export const FOREIGN_FORM = 'This form was sent from another site, not from this page. Check the request and submit it again.';

/**
 * Why a request comes from a browser, or undefined when nothing says so. Current browsers mark every POST
 * they send: `Origin` (its value may be `null`, as from our own pages, which send no referrer),
 * `Sec-Fetch-Site` (with `Sec-Fetch-Dest`, and `Sec-Fetch-User` on a navigation), and
 * `Upgrade-Insecure-Requests` on a navigation, which a form submission is. A page has no say in the headers
 * of a form it submits, and a script in a page may not set or remove `Origin` or `Sec-*` in a fetch (forbidden
 * header names), which always sends `Origin` with a POST. A script or an application outside a browser sends
 * none of them. `Sec-Fetch-Mode` alone is no mark: Node's own fetch sends `Sec-Fetch-Mode: cors`.
 */
export function browserContext(headers: IncomingHttpHeaders): string | undefined {
  if (headers.origin !== undefined) return 'Origin';
  for (const name of ['sec-fetch-site', 'sec-fetch-dest', 'sec-fetch-user']) {
    if (headers[name] !== undefined) return name;
  }
  if (headers['upgrade-insecure-requests'] !== undefined) return 'Upgrade-Insecure-Requests';
  return undefined;
}

/**
 * True when the browser says a page of another origin sent the request. `same-origin` is our own page;
 * `none` is the person's own doing (a reload); `same-site` is a sibling host, which is not this server either.
 */
export function sentFromElsewhere(headers: IncomingHttpHeaders): boolean {
  const site = headers['sec-fetch-site'];
  return site === 'cross-site' || site === 'same-site';
}

export class CsrfTokens {
  readonly #key = randomBytes(32);
  /** Used nonces until their token would have expired anyway. */
  readonly #used = new Map<string, number>();

  issue(bound: readonly string[], now = Date.now()): string {
    const issued = Math.floor(now / 1000).toString(36);
    const nonce = randomBytes(16).toString('base64url');
    return `${issued}.${nonce}.${this.#mac(issued, nonce, bound)}`;
  }

  /**
   * Whether a form POST may go on; the reason to show the person when not. Refused: a POST another site's page
   * sent (token or not), a token that is not good, and a browser's POST without a token. A POST without a
   * token that no browser sent goes on, unless `formRequired` (a page only ever submitted from our form).
   */
  check(headers: IncomingHttpHeaders, token: string | undefined, bound: readonly string[], options: { formRequired?: boolean } = {}): string | undefined {
    if (sentFromElsewhere(headers)) return FOREIGN_FORM;
    if (token === undefined && !options.formRequired && browserContext(headers) === undefined) return undefined;
    return this.consume(token, bound) ? undefined : EXPIRED_FORM;
  }

  /** True once for a token issued for these values and still fresh; false for anything else. */
  consume(token: string | undefined, bound: readonly string[], now = Date.now()): boolean {
    const [issued, nonce, mac, extra] = (token ?? '').split('.');
    if (!issued || !nonce || !mac || extra !== undefined) return false;
    const expected = Buffer.from(this.#mac(issued, nonce, bound));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
    const age = now / 1000 - parseInt(issued, 36);
    if (!(age >= -5 && age <= MAX_AGE_S)) return false;
    this.#prune(now);
    if (this.#used.has(nonce)) return false;
    this.#used.set(nonce, now + MAX_AGE_S * 1000);
    return true;
  }

  #mac(issued: string, nonce: string, bound: readonly string[]): string {
    const hmac = createHmac('sha256', this.#key).update(`${issued}.${nonce}`);
    for (const value of bound) hmac.update('\0').update(value);
    return hmac.digest('base64url');
  }

  #prune(now: number): void {
    for (const [nonce, until] of this.#used) {
      if (until > now) break;
      this.#used.delete(nonce);
    }
  }
}
