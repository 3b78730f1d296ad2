/**
 * Who is calling over HTTP. No Authorization header: an anonymous caller, judged by address alone.
 * `Basic user@host:password`: an account, checked through the verified-credential cache. `Bearer`: an
 * OAuth token, once a token service is plugged in. Anything else, or bad credentials: 401.
 *
 * Passwords go through the server's failed-login limit (LoginThrottle): a refused address or account gets
 * 429 with Retry-After before its password is looked at, and each wrong password counts. Tokens do not count
 * (256 random bits are not guessed, and an expired token is not an attack), but a banned address may not use
 * them either.
 *
 * Credentials that succeeded on a connection are trusted again for the next requests on that connection with
 * the same credentials (clients that keep the connection alive send the same header every time): no decoding,
 * name preparation or hashing, only the failed-login limit (and the account's ban for a password), for as
 * long as the credential cache would trust the password, or the token look-up cache the token (their
 * lifetimes; any password change, account removal or token revocation ends it).
 */
import type { AccountService } from '../accounts/accounts.js';
import type { CacheMark } from '../caches/cache-epoch.js';
import type { ResolvedBearer } from '../oauth/service.js';
import { nameprep, nodeprep } from '@service/plugin-api';
import type { HttpAuthApi, HttpCredentials, LoginOrigin } from '@service/plugin-api';
import type { LoginThrottle } from '../accounts/login-throttle.js';
import { CommandError } from '@service/plugin-api';
import type { Caller } from '@service/plugin-api';

/** What the OAuth service lends this: tokens resolved, and resolutions judged again. */
export interface BearerTokens {
  /** Resolves a token to its account and scopes, or throws an `unauthorized` CommandError. */
  resolve(token: string): Promise<ResolvedBearer>;
  /** Whether a token resolved earlier still stands without being looked up again (not revoked, not expired). */
  stillValid(resolved: ResolvedBearer): boolean;
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

/**
 * Equal strings, in a time that depends on their length only: a connection shared by several clients (a
 * proxy's) must not let one learn another's credentials from how long a comparison took.
 */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** XML-RPC's credential parts as one string: lengths first and the secret's kind marked, so that no two give the same one. */
function joinedParts(user: string, host: string, secret: string): string {
  return `${user.length}:${user}${host.length}:${host}${secret}`;
}

type Account = Readonly<{ user: string; host: string }>;

/** A login that succeeded on one connection, trusted again there (see the file's comment). */
type ConnectionLogin = {
  /** The credentials as sent: the Authorization header, or XML-RPC's parts joined. */
  readonly credential: string;
  /** What the request is answered with. */
  readonly credentials: HttpCredentials;
} & (
  | {
      readonly kind: 'password';
      readonly account: Account;
      /** The account's key in the failed-login limit. */
      readonly key: string;
      readonly mark: CacheMark;
    }
  | { readonly kind: 'token'; readonly resolved: ResolvedBearer }
);

const invalidCredentials = () => new CommandError('unauthorized', 'invalid credentials: expected user@host and the right password');

export class HttpAuthenticator implements HttpAuthApi {
  #bearer?: BearerTokens;
  /** Keyed by the connection (its socket), so an entry goes with it. */
  readonly #connections = new WeakMap<object, ConnectionLogin>();

  constructor(
    private readonly accounts: AccountService,
    private readonly logins: LoginThrottle,
  ) {}

  /** The OAuth service plugs in here. */
  setBearerTokens(tokens: BearerTokens | undefined): void {
    this.#bearer = tokens;
  }

  async authenticate(header: string | undefined, origin: LoginOrigin): Promise<HttpCredentials> {
    if (!header) return {};
    const again = this.#again(header, origin);
    if (again) return again;
    const { scheme, value } = parseAuthorization(header);
    if (scheme === 'basic') return this.#basic(value, origin, header);
    if (scheme === 'bearer') return this.#token(value, origin, header);
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
    const joined = joinedParts(user, host, 'password' in credential ? `p${credential.password}` : `t${credential.token}`);
    const again = this.#again(joined, origin);
    if (again) return again;
    if ('password' in credential) return this.#password(user, host, credential.password, origin, joined);
    return this.#token(credential.token, origin, joined, { user, host });
  }

  /** A bearer token (of `owner` when given: XML-RPC names the account beside the token). */
  async #token(token: string, origin: LoginOrigin, credential: string, owner?: { user: string; host: string }): Promise<HttpCredentials> {
    if (!this.#bearer) throw new CommandError('unauthorized', 'OAuth tokens are not accepted: no OAuth token service is running');
    this.#admit(origin);
    const resolved = await this.#bearer.resolve(token);
    const { account, scopes, tokenId } = resolved;
    if (owner && (!account || !sameAccount(account, owner.user, owner.host))) {
      throw new CommandError('unauthorized', `the token does not belong to ${owner.user}@${owner.host}`);
    }
    const credentials: HttpCredentials = Object.freeze({ account, oauth: Object.freeze({ scopes, tokenId }) });
    if (origin.connection !== undefined && resolved.mark !== undefined) this.#connections.set(origin.connection, { kind: 'token', credential, resolved, credentials });
    return credentials;
  }

  /**
   * Refuses a login the failed-login limit bans, before any credential is checked: 403 for an address
   * mod_fail2ban banned, 429 for the kernel's own limits; both with Retry-After.
   */
  #admit(origin: LoginOrigin, account?: string): void {
    const refusal = this.logins.refusal(origin.ip, account);
    if (refusal) throw new CommandError(refusal.kind === 'banned' ? 'forbidden' : 'rate_limited', refusal.message, undefined, refusal.retryAfter);
  }

  /**
   * The caller when these credentials succeeded on this connection and still stand, after the failed-login
   * limit (and a password's account's ban); undefined when they must be checked.
   */
  #again(credential: string, origin: LoginOrigin): Promise<HttpCredentials> | HttpCredentials | undefined {
    const connection = origin.connection;
    if (connection === undefined) return undefined;
    const login = this.#connections.get(connection);
    if (login === undefined || !sameText(login.credential, credential)) return undefined;
    if (login.kind === 'token') {
      if (!this.#bearer?.stillValid(login.resolved)) return undefined;
      this.#admit(origin);
      return login.credentials;
    }
    if (!this.accounts.stillTrusted(login.mark)) return undefined;
    return this.#passwordAgain(connection, login, origin);
  }

  async #passwordAgain(connection: object, login: ConnectionLogin & { kind: 'password' }, origin: LoginOrigin): Promise<HttpCredentials> {
    this.#admit(origin, login.key);
    // A right password of an account that may not log in now (banned) is refused like a wrong one, as checkPassword does.
    if ((await this.accounts.loginRefusal(login.account.user, login.account.host)) !== undefined) {
      this.#connections.delete(connection);
      this.logins.failed(origin.ip, login.key, origin.way);
      throw invalidCredentials();
    }
    this.logins.succeeded(origin.ip, login.key);
    return login.credentials;
  }

  /** Not async itself (it throws or hands over #password's promise): one async frame less per request. */
  #basic(value: string, origin: LoginOrigin, header: string): Promise<HttpCredentials> {
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
    return this.#password(jid.slice(0, at), jid.slice(at + 1), password, origin, header);
  }

  /** `credential`: the credentials as sent, kept for the connection's next requests when they succeed. */
  async #password(userText: string, hostText: string, password: string, origin: LoginOrigin, credential: string): Promise<HttpCredentials> {
    const user = userText.toLowerCase();
    const host = hostText.toLowerCase();
    const account = loginKey(user, host);
    this.#admit(origin, account);
    if (!user || !host || !password) {
      this.logins.failed(origin.ip, account, origin.way);
      throw invalidCredentials();
    }
    // Taken before the check: a password change that lands while it runs ends the mark.
    const mark = origin.connection === undefined ? undefined : this.accounts.verificationMark();
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
    const prepared: Account = Object.freeze({ user: nodeprep(user), host: nameprep(host) });
    const credentials: HttpCredentials = Object.freeze({ account: prepared });
    if (mark) this.#connections.set(origin.connection!, { kind: 'password', credential, account: prepared, key: account, mark, credentials });
    return credentials;
  }
}
