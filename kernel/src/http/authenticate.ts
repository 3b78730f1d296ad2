/**
 * Who is calling over HTTP. No Authorization header: an anonymous caller, judged by address alone.
 * `Basic user@host:password`: an account, checked through the verified-credential cache. `Bearer`: an
 * OAuth token, once a token service is plugged in. Anything else, or bad credentials: 401.
 *
 * Passwords go through the server's failed-login limit (LoginThrottle): a refused address or account gets
 * 429 with Retry-After before its password is looked at, and each wrong password counts. Tokens do not count
 * (256 random bits are not guessed, and an expired token is not an attack), but a banned address may not use
 * them either.
 */
import type { AccountService } from '../accounts/accounts.js';
import { nameprep, nodeprep } from '@service/plugin-api';
import type { HttpAuthApi, HttpCredentials, LoginOrigin } from '@service/plugin-api';
import type { LoginThrottle } from '../accounts/login-throttle.js';
import { CommandError } from '@service/plugin-api';
import type { Caller } from '@service/plugin-api';

export interface BearerResolver {
  /** Resolves a token to its account and scopes, or throws an `unauthorized` CommandError. */
  (token: string): Promise<{ account: { user: string; host: string } | undefined; scopes: readonly string[]; tokenId: string }>;
}


/** `Authorization: <scheme> <credentials>`: the scheme in lower case (schemes are case-insensitive), the credentials trimmed. */
function parseAuthorization(header: string): { scheme: string; value: string } {
  const trimmed = header.trim();
  const space = trimmed.indexOf(' ');
  if (space === -1) return { scheme: trimmed.toLowerCase(), value: '' };
  return { scheme: trimmed.slice(0, space).toLowerCase(), value: trimmed.slice(space + 1).trim() };
}

/** The account a login names, in prepared form when it has one, so that spellings of one name count together. */
function loginKey(user: string, host: string): string {
  try {
    return `${nodeprep(user)}@${nameprep(host)}`;
  } catch {
    return `${user}@${host}`;
  }
}

/** Whether `user@host`, in any spelling that prepares to it, names `account` (whose names are prepared). */
function sameAccount(account: { user: string; host: string }, user: string, host: string): boolean {
  try {
    return nodeprep(user) === account.user && nameprep(host) === account.host;
  } catch {
    return false;
  }
}

const invalidCredentials = () => new CommandError('unauthorized', 'invalid credentials: expected user@host and the right password');

export class HttpAuthenticator implements HttpAuthApi {
  #bearer?: BearerResolver;

  constructor(
    private readonly accounts: AccountService,
    private readonly logins: LoginThrottle,
  ) {}

  /** The OAuth service plugs in here. */
  setBearerResolver(resolver: BearerResolver | undefined): void {
    this.#bearer = resolver;
  }

  async authenticate(header: string | undefined, origin: LoginOrigin): Promise<HttpCredentials> {
    if (!header) return {};
    const { scheme, value } = parseAuthorization(header);
    if (scheme === 'basic') return { account: await this.#basic(value, origin) };
    if (scheme === 'bearer') {
      if (!this.#bearer) throw new CommandError('unauthorized', 'bearer tokens are not accepted: no OAuth token service is running');
      this.#admit(origin);
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
  async authenticateParts(user: string, host: string, credential: { password: string } | { token: string }, origin: LoginOrigin): Promise<HttpCredentials> {
    if ('password' in credential) return { account: await this.#password(user, host, credential.password, origin) };
    if (!this.#bearer) throw new CommandError('unauthorized', 'tokens are not accepted: no OAuth token service is running');
    this.#admit(origin);
    const { account, scopes, tokenId } = await this.#bearer(credential.token);
    if (!account || !sameAccount(account, user, host)) {
      throw new CommandError('unauthorized', `the token does not belong to ${user}@${host}`);
    }
    return { account, oauth: { scopes, tokenId } };
  }

  /**
   * Refuses a login the failed-login limit bans, before any credential is checked: 403 for an address
   * mod_fail2ban banned, 429 for the kernel's own limits; both with Retry-After.
   */
  #admit(origin: LoginOrigin, account?: string): void {
    const refusal = this.logins.refusal(origin.ip, account);
    if (refusal) throw new CommandError(refusal.kind === 'banned' ? 'forbidden' : 'rate_limited', refusal.message, undefined, refusal.retryAfter);
  }

  /** Not async itself (it throws or hands over #password's promise): one async frame less per request. */
  #basic(value: string, origin: LoginOrigin): Promise<{ user: string; host: string }> {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const jid = colon === -1 ? '' : decoded.slice(0, colon);
    const password = colon === -1 ? '' : decoded.slice(colon + 1);
    const at = jid.lastIndexOf('@');
    if (at <= 0) {
      this.#admit(origin);
      this.logins.failed(origin.ip, undefined, origin.way);
      throw invalidCredentials();
    }
    return this.#password(jid.slice(0, at), jid.slice(at + 1), password, origin);
  }

  async #password(userText: string, hostText: string, password: string, origin: LoginOrigin): Promise<{ user: string; host: string }> {
    const user = userText.toLowerCase();
    const host = hostText.toLowerCase();
    const account = loginKey(user, host);
    this.#admit(origin, account);
    if (!user || !host || !password) {
      this.logins.failed(origin.ip, account, origin.way);
      throw invalidCredentials();
    }
    let ok = false;
    try {
      ok = await this.accounts.checkPassword(user, host, password);
    } catch (err) {
      // An unknown host or a malformed name is just wrong credentials from the caller's side.
      if (!(err instanceof CommandError && err.kind === 'bad_argument')) throw err;
    }
    if (!ok) {
      this.logins.failed(origin.ip, account, origin.way);
      throw invalidCredentials();
    }
    this.logins.succeeded(origin.ip, account);
    // The account as the server names it (checkPassword accepted both parts, so they prepare): access rules
    // and own-account checks compare prepared names, and 'ＭＡＬＬＯＲＹ' must be mallory there too.
    return { user: nodeprep(user), host: nameprep(host) };
  }
}
