/**
 * Checks the JID and password a person types into the authorization form or an application sends with the
 * password grant: the server's failed-login limit first (a blocked guesser learns nothing), then the password,
 * then oauth_access. Each outcome says what it is, so a denial is never reported as a bad password.
 */
import type { AccountService } from '../../accounts/accounts.js';
import { InvalidJid, parseJid } from '@service/plugin-api';
import { CommandError } from '@service/plugin-api';
import type { OAuthService } from '../service.js';
import type { LoginThrottle } from '../../accounts/login-throttle.js';

export type Account = { readonly user: string; readonly host: string };

export type LoginOutcome =
  | { readonly ok: true; readonly account: Account }
  | { readonly ok: false; readonly reason: 'malformed' | 'wrong' | 'blocked' | 'banned' | 'denied'; readonly message: string; readonly retryAfter?: number };

/** The HTTP status of a refused login on the forms: 429 for the kernel's limits, 403 for a ban, else 400. */
export function refusedLoginStatus(reason: Exclude<LoginOutcome, { ok: true }>['reason']): 400 | 403 | 429 {
  return reason === 'blocked' ? 429 : reason === 'banned' ? 403 : 400;
}

export class ResourceOwnerLogin {
  constructor(
    private readonly accounts: AccountService,
    private readonly oauth: () => OAuthService,
    private readonly logins: LoginThrottle,
  ) {}

  async login(jidText: string, password: string, ip: string): Promise<LoginOutcome> {
    let account: Account;
    try {
      const jid = parseJid(jidText.trim());
      if (jid.user === undefined) return { ok: false, reason: 'malformed', message: `'${jidText}' is not a JID of the form user@domain` };
      account = { user: jid.user, host: jid.host };
    } catch (err) {
      if (!(err instanceof InvalidJid)) throw err;
      return { ok: false, reason: 'malformed', message: `'${jidText}' is not a valid JID: ${err.message}` };
    }
    const key = `${account.user}@${account.host}`;
    const refusal = this.logins.refusal(ip, key);
    // `banned`: an address mod_fail2ban banned (403); `blocked`: the kernel's own limits (429).
    if (refusal) return { ok: false, reason: refusal.kind === 'banned' ? 'banned' : 'blocked', message: refusal.message, retryAfter: refusal.retryAfter };
    let verified = false;
    try {
      verified = password !== '' && (await this.accounts.checkPassword(account.user, account.host, password));
    } catch (err) {
      // A host this server does not serve is a wrong JID from the person's side.
      if (!(err instanceof CommandError && err.kind === 'bad_argument')) throw err;
    }
    if (!verified) {
      this.logins.failed(ip, key, 'oauth');
      return { ok: false, reason: 'wrong', message: 'wrong JID or password' };
    }
    this.logins.succeeded(ip, key);
    const denial = this.oauth().accessRefusal(account, ip);
    if (denial) return { ok: false, reason: 'denied', message: denial };
    return { ok: true, account };
  }
}
