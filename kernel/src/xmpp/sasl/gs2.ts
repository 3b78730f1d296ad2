/**
 * The GS2 header (RFC 5801 §4) that SCRAM and OAUTHBEARER messages start with:
 * `gs2-cb-flag "," [ "a=" saslname ] ","`, and the escaping of a `saslname`.
 *
 * Nothing here decides how a mechanism fails: problems come back as text, and each mechanism reports
 * them with its own condition (SCRAM's malformed-request, the OAuth mechanisms' not-authorized).
 */

/**
 * `saslname` unescaping: `=2C` is a comma, `=3D` an equals sign; any other `=` makes the name malformed
 * (undefined), since a decoder that let it through would read two spellings of one name differently.
 */
export function unescapeSaslname(text: string): string | undefined {
  if (/=(?!2C|3D)/.test(text)) return undefined;
  return text.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

export interface Gs2Header {
  /** `n`: no channel binding; `y`: the client could bind but thinks the server cannot; `p`: binding to `cbName`. */
  readonly cbFlag: 'n' | 'y' | 'p';
  readonly cbName?: string;
  /** The authorization identity, unescaped; empty when the header has none. */
  readonly authzid: string;
  /** What follows the header's closing comma. */
  readonly rest: string;
}

// UTF8-char-safe (RFC 5801 §4): any character but NUL, "," and "=" (which only starts an escape).
const SASLNAME = /^(?:[^\0,=]|=2C|=3D)+$/u;
const CB_NAME = /^[A-Za-z0-9.-]+$/;

/**
 * Parses the header strictly: one flag, at most one `a=` part with a non-empty, correctly escaped name,
 * and the closing comma. The GSS-API-only `F,` prefix is not part of it (no mechanism here is a GSS-API one).
 */
export function parseGs2Header(message: string): Gs2Header | { readonly problem: string } {
  const first = message.indexOf(',');
  const second = first === -1 ? -1 : message.indexOf(',', first + 1);
  if (second === -1) return { problem: 'the GS2 header (n,, or n,a=<authzid>,) is missing or not closed by a comma' };
  const flag = message.slice(0, first);
  const authzPart = message.slice(first + 1, second);
  let cbFlag: Gs2Header['cbFlag'];
  let cbName: string | undefined;
  if (flag === 'n' || flag === 'y') cbFlag = flag;
  else if (flag.startsWith('p=') && CB_NAME.test(flag.slice(2))) [cbFlag, cbName] = ['p', flag.slice(2)];
  else return { problem: `invalid GS2 channel binding flag ${JSON.stringify(flag.slice(0, 20))}` };
  let authzid = '';
  if (authzPart !== '') {
    const name = authzPart.startsWith('a=') ? authzPart.slice(2) : undefined;
    if (name === undefined || !SASLNAME.test(name)) return { problem: 'the authzid in the GS2 header is not a=<saslname>' };
    authzid = unescapeSaslname(name)!;
  }
  return { cbFlag, cbName, authzid, rest: message.slice(second + 1) };
}
