/**
 * Who is calling over HTTP. No Authorization header: an anonymous caller, judged by address alone.
 * `Basic user@host:password`: an account, checked through the verified-credential cache. `Bearer`: an
 * OAuth token, once a token service is plugged in. Anything else, or bad credentials: 401.
 */
import type { AccountService } from '../accounts/accounts.js';
import { CommandError } from '../commands/errors.js';
import type { Caller } from '../commands/types.js';

export interface BearerResolver {
  /** Resolves a token to its account and scopes, or throws an `unauthorized` CommandError. */
  (token: string): Promise<{ account: { user: string; host: string } | undefined; scopes: readonly string[]; tokenId: string }>;
}

export type HttpCredentials = Pick<Caller, 'account' | 'oauth'>;

/** `Authorization: <scheme> <credentials>`: the scheme in lower case (schemes are case-insensitive), the credentials trimmed. */
function parseAuthorization(header: string): { scheme: string; value: string } {
  const trimmed = header.trim();
  const space = trimmed.indexOf(' ');
  if (space === -1) return { scheme: trimmed.toLowerCase(), value: '' };
  return { scheme: trimmed.slice(0, space).toLowerCase(), value: trimmed.slice(space + 1).trim() };
}

const invalidCredentials = () => new CommandError('unauthorized', 'invalid credentials: expected user@host and the right password');

export class HttpAuthenticator {
  #bearer?: BearerResolver;

  constructor(private readonly accounts: AccountService) {}

  /** The OAuth service plugs in here. */
  setBearerResolver(resolver: BearerResolver | undefined): void {
    this.#bearer = resolver;
  }

  async authenticate(header: string | undefined): Promise<HttpCredentials> {
    if (!header) return {};
    const { scheme, value } = parseAuthorization(header);
    if (scheme === 'basic') return { account: await this.#basic(value) };
    if (scheme === 'bearer') {
      if (!this.#bearer) throw new CommandError('unauthorized', 'bearer tokens are not accepted: no OAuth token service is running');
      const { account, scopes, tokenId } = await this.#bearer(value);
      return { account, oauth: { scopes, tokenId } };
    }
    throw new CommandError('unauthorized', `unsupported authorization scheme '${scheme}': use Basic or Bearer`);
  }

  /**
   * The WWW-Authenticate challenge for a request refused with 401 (RFC 7235 §4.1). A request that used
   * Bearer gets Bearer's (RFC 6750 §3), also when the credentials are empty: the header ends up as just
   * `Bearer` once HTTP drops the trailing space, and that is still a token attempt, not a Basic one.
   * It is invalid_token in every case, never invalid_request: the answer is 401 (code 10), which RFC 6750
   * pairs with invalid_token (invalid_request goes with 400), and getting a token is the remedy either way.
   */
  challenge(header: string | undefined): string {
    if (header && parseAuthorization(header).scheme === 'bearer') return 'Bearer error="invalid_token"';
    return 'Basic realm="service", charset="UTF-8"';
  }

  /**
   * Credentials given as parts (XML-RPC): a password, or a token that must belong to that account.
   */
  async authenticateParts(user: string, host: string, credential: { password: string } | { token: string }): Promise<HttpCredentials> {
    if ('password' in credential) return { account: await this.#password(user, host, credential.password) };
    if (!this.#bearer) throw new CommandError('unauthorized', 'tokens are not accepted: no OAuth token service is running');
    const { account, scopes, tokenId } = await this.#bearer(credential.token);
    if (!account || account.user !== user.toLowerCase() || account.host !== host.toLowerCase()) {
      throw new CommandError('unauthorized', `the token does not belong to ${user}@${host}`);
    }
    return { account, oauth: { scopes, tokenId } };
  }

  async #basic(value: string): Promise<{ user: string; host: string }> {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const jid = colon === -1 ? '' : decoded.slice(0, colon);
    const password = colon === -1 ? '' : decoded.slice(colon + 1);
    const at = jid.lastIndexOf('@');
    if (at <= 0) throw invalidCredentials();
    return this.#password(jid.slice(0, at), jid.slice(at + 1), password);
  }

  async #password(userText: string, hostText: string, password: string): Promise<{ user: string; host: string }> {
    const user = userText.toLowerCase();
    const host = hostText.toLowerCase();
    if (!user || !host || !password) throw invalidCredentials();
    let ok = false;
    try {
      ok = await this.accounts.checkPassword(user, host, password);
    } catch (err) {
      // An unknown host or a malformed name is just wrong credentials from the caller's side.
      if (err instanceof CommandError && err.kind === 'bad_argument') throw invalidCredentials();
      throw err;
    }
    if (!ok) throw invalidCredentials();
    return { user, host };
  }
}
