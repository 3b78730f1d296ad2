/**
 * CSRF tokens of the authorization form: `<issued>.<nonce>.<mac>`, an HMAC over the time, a nonce and the
 * authorization request the form was shown for. A POST must carry a token this process issued, for the same
 * request, less than `maxAge` seconds ago, and not used before: a page elsewhere cannot forge one, replay one,
 * or swap the client, redirect URI or scopes under the user's eyes. Stateless but for the set of used nonces.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const MAX_AGE_S = 600;

export class CsrfTokens {
  readonly #key = randomBytes(32);
  /** Used nonces until their token would have expired anyway. */
  readonly #used = new Map<string, number>();

  issue(bound: readonly string[], now = Date.now()): string {
    const issued = Math.floor(now / 1000).toString(36);
    const nonce = randomBytes(16).toString('base64url');
    return `${issued}.${nonce}.${this.#mac(issued, nonce, bound)}`;
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
