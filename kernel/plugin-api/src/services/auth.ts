/**
 * Authentication a frontend module needs: turning an HTTP Authorization header (or XML-RPC's credential
 * parts) into a caller, through the server's one failed-login limit; and the OAuth tokens a module may end
 * (an account banned loses its tokens).
 */
import type { Caller } from '../commands/types.js';

/** Which door a login came through, for the failed-login limit's log. */
export type LoginWay = 'c2s' | 'http_api' | 'xmlrpc' | 'oauth';

/** Where an HTTP login comes from: the peer address and the frontend. */
export interface LoginOrigin {
  readonly ip: string;
  readonly way: LoginWay;
  /**
   * The connection the request came on (its socket), when it may carry more requests: a password or token
   * that succeeded on it is trusted again for the same credentials on it, as long as the credential or token
   * cache would trust it (the failed-login limit and bans still apply to each request).
   */
  readonly connection?: object;
}

export type HttpCredentials = Pick<Caller, 'account' | 'oauth'>;

export interface HttpAuthApi {
  /**
   * No header: an anonymous caller. Basic: an account (password checked, failures counted). Bearer: a token.
   * Throws an `unauthorized` CommandError for bad credentials, `rate_limited` for a refused address.
   */
  authenticate(header: string | undefined, origin: LoginOrigin): Promise<HttpCredentials>;
  /** Credentials given as parts (XML-RPC): a password, or a token that must belong to that account. */
  authenticateParts(user: string, host: string, credential: { password: string } | { token: string }, origin: LoginOrigin): Promise<HttpCredentials>;
  /** The WWW-Authenticate challenge for a request refused with 401. */
  challenge(header: string | undefined): string;
}

export interface TokensApi {
  /** Revokes every token of an account; resolves with how many there were. */
  revokeAccount(account: { readonly user: string; readonly host: string }): Promise<number>;
}
