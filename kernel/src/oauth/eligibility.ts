/**
 * Whether an account may be given a token now. Asked on every issuance — a login, a sign-in session at the
 * authorization server, a code or refresh token being redeemed, an admin's oauth_issue_token — not only at
 * login: a ban, a change of oauth_access or the account's removal must not be outlived by a session or a
 * refresh token that was issued before.
 */
import type { AccountService } from '../accounts/accounts.js';
import { CommandError } from '@service/plugin-api';
import type { OAuthService } from './service.js';

export type Account = { readonly user: string; readonly host: string };

export interface Refusal {
  /**
   * missing: no such account (removed, or its host is no longer served); replaced: the name was registered
   * again after the sign-in, so it is someone else's account; banned: a password_login_check handler refuses
   * it; denied: oauth_access does.
   */
  readonly kind: 'missing' | 'replaced' | 'banned' | 'denied';
  readonly message: string;
}

export interface EligibilityContext {
  /** The caller's address, for ip rules of oauth_access. */
  readonly ip?: string;
  /** When the person signed in, in epoch seconds as oidc-provider records it (`authTime`, `loginTs`). */
  readonly authTime?: number;
}

export async function tokenRefusal(accounts: AccountService, oauth: OAuthService, account: Account, context: EligibilityContext = {}): Promise<Refusal | undefined> {
  const jid = `${account.user}@${account.host}`;
  let registeredAt: number | undefined;
  try {
    registeredAt = await accounts.registeredAt(account.user, account.host);
  } catch (err) {
    // A name that is no longer valid or a host no longer served: the account is as good as gone.
    if (!(err instanceof CommandError && err.kind === 'bad_argument')) throw err;
  }
  if (registeredAt === undefined) return { kind: 'missing', message: `the account ${jid} does not exist` };
  // authTime has whole seconds: an account registered in the second of the sign-in counts as the same one.
  if (context.authTime !== undefined && registeredAt >= (context.authTime + 1) * 1000) {
    return { kind: 'replaced', message: `the account ${jid} was registered again after this sign-in` };
  }
  const refusal = await accounts.loginRefusal(account.user, account.host);
  if (refusal) return { kind: 'banned', message: refusal };
  const denial = oauth.accessRefusal(account, context.ip);
  if (denial) return { kind: 'denied', message: denial };
  return undefined;
}
