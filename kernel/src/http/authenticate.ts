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
  (token: string): Promise<{ account: { user: string; host: string }; scopes: readonly string[]; tokenId: string }>;
}

export type HttpCredentials = Pick<Caller, 'account' | 'oauth'>;

export class HttpAuthenticator {
  #bearer?: BearerResolver;

  constructor(private readonly accounts: AccountService) {}

  /** The OAuth service plugs in here. */
  setBearerResolver(resolver: BearerResolver | undefined): void {
    this.#bearer = resolver;
  }

  async authenticate(header: string | undefined): Promise<HttpCredentials> {
    if (!header) return {};
    const space = header.indexOf(' ');
    const scheme = (space === -1 ? header : header.slice(0, space)).toLowerCase();
    const value = space === -1 ? '' : header.slice(space + 1).trim();
    if (scheme === 'basic') return { account: await this.#basic(value) };
    if (scheme === 'bearer') {
      if (!this.#bearer) throw new CommandError('unauthorized', 'bearer tokens are not accepted: no OAuth token service is running');
      const { account, scopes, tokenId } = await this.#bearer(value);
      return { account, oauth: { scopes, tokenId } };
    }
    throw new CommandError('unauthorized', `unsupported authorization scheme '${scheme}': use Basic or Bearer`);
  }

  async #basic(value: string): Promise<{ user: string; host: string }> {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const jid = colon === -1 ? '' : decoded.slice(0, colon);
    const password = colon === -1 ? '' : decoded.slice(colon + 1);
    const at = jid.lastIndexOf('@');
    const bad = () => new CommandError('unauthorized', 'invalid credentials: expected user@host and the right password');
    if (at <= 0 || !password) throw bad();
    const user = jid.slice(0, at).toLowerCase();
    const host = jid.slice(at + 1).toLowerCase();
    let ok = false;
    try {
      ok = await this.accounts.checkPassword(user, host, password);
    } catch (err) {
      // An unknown host or a malformed name is just wrong credentials from the caller's side.
      if (err instanceof CommandError && err.kind === 'bad_argument') throw bad();
      throw err;
    }
    if (!ok) throw bad();
    return { user, host };
  }
}
