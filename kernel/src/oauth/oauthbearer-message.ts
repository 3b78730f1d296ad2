/**
 * The OAUTHBEARER client response (RFC 7628 §3.1), read strictly:
 *
 *   client-resp = gs2-header kvsep *kvpair kvsep       (nothing after the final kvsep)
 *   gs2-header  = ("n" / "y") "," ["a=" saslname] ","    (RFC 5801; "p=": this mechanism has no channel binding)
 *   kvpair      = key "=" value kvsep,  key = 1*ALPHA,  value = *(VCHAR / SP / HTAB / CR / LF),  kvsep = %x01
 *   auth value  = "Bearer" 1*SP b64token                 (RFC 6750 §2.1; the scheme in any case, as in HTTP)
 *
 * Each key at most once, and `auth` is required. Leniency here is a hole, not a convenience: with two
 * `auth` pairs, a component that reads the first one sees another token than the one that was checked.
 */
import { parseGs2Header } from '../xmpp/sasl/gs2.js';

export interface OAuthBearerMessage {
  /** The authorization identity from the GS2 header, unescaped; empty when there is none. */
  readonly authzid: string;
  /** The bearer token from `auth`. */
  readonly token: string;
  /** Every pair, keyed in lower case. `host` and `port` are informative, and unknown keys are ignored (§3.1). */
  readonly pairs: ReadonlyMap<string, string>;
}

const KVSEP = '\x01';
const KEY = /^[A-Za-z]+$/;
const VALUE = /^[\x21-\x7e \t\r\n]*$/;
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i;
// fatal: bytes that are not UTF-8 make the message malformed instead of turning into U+FFFD;
// ignoreBOM: a leading BOM stays in the text (and fails the GS2 flag) instead of being dropped unseen.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function parseOAuthBearerMessage(bytes: Uint8Array): OAuthBearerMessage | { readonly problem: string } {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return { problem: 'the message is not UTF-8' };
  }
  const header = parseGs2Header(text);
  if ('problem' in header) return header;
  if (header.cbFlag === 'p') return { problem: 'OAUTHBEARER has no channel binding: the GS2 flag must be n or y, not p=' };
  if (!header.rest.startsWith(KVSEP)) return { problem: 'the GS2 header must be followed by %x01' };
  const pairs = new Map<string, string>();
  let at = 1;
  for (;;) {
    const end = header.rest.indexOf(KVSEP, at);
    if (end === -1) return { problem: 'the message does not end with %x01%x01' };
    if (end === at) {
      if (end + 1 !== header.rest.length) return { problem: 'data follows the final %x01%x01' };
      break;
    }
    const pair = header.rest.slice(at, end);
    const eq = pair.indexOf('=');
    const key = eq === -1 ? pair : pair.slice(0, eq);
    if (eq === -1 || !KEY.test(key)) return { problem: 'a key-value pair is not key=value with a key of letters' };
    if (!VALUE.test(pair.slice(eq + 1))) return { problem: `the value of ${key} has characters other than visible ASCII, space, tab, CR and LF` };
    // Keys repeated in another case count as repeated: a component that folds case would see two values.
    if (pairs.has(key.toLowerCase())) return { problem: `the key ${key} appears more than once` };
    pairs.set(key.toLowerCase(), pair.slice(eq + 1));
    at = end + 1;
  }
  const auth = pairs.get('auth');
  if (auth === undefined) return { problem: 'the auth key is missing' };
  const token = BEARER.exec(auth)?.[1];
  if (token === undefined) return { problem: 'auth is not "Bearer <token>"' };
  return { authzid: header.authzid, token, pairs };
}
