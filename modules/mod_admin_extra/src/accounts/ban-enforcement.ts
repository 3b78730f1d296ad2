/**
 * What makes a ban bite, wherever an account could get in:
 *
 * - XMPP, every SASL mechanism (PLAIN, SCRAM-*, X-OAUTH2, OAUTHBEARER): `c2s_auth_check` refuses with
 *   <account-disabled/> and the reason. It reads the ban through the records' cache, as every check does:
 *   ban_account and unban_account change the cache on every node and worker at once (BANS_CACHE), so a
 *   login never needs its own read of storage (it was a second query on every login);
 * - a password anywhere else (HTTP Basic on /api, XML-RPC, OAuth's password forms, check_password):
 *   `password_login_check` makes the account service answer "wrong credentials";
 * - a stream that authenticated just before the ban was stored and binds after the kick: it is kicked
 *   at `c2s_session_bound`.
 *
 * The hooks are registered under the module's name, so they go when mod_admin_extra stops.
 */
import { SaslFailure, StreamError, type AccountKey } from '@service/plugin-api';
import type { AdminContext } from '../context.js';
import type { BanDetails, BanRecords } from './ban-records.js';

/** The text a banned account's clients see when their sessions are closed. */
export function kickText(ban: Pick<BanDetails, 'reason'>): string {
  return ban.reason ? `Account banned: ${ban.reason}` : 'Account banned';
}

export function kickError(ban: Pick<BanDetails, 'reason'>): StreamError {
  return new StreamError('policy-violation', kickText(ban));
}

export function enforceBans(ctx: AdminContext, bans: BanRecords): void {
  const { hooks, xmpp } = ctx.services;
  const owner = ctx.name;
  hooks.add(
    'c2s_auth_check',
    async (user, host) => {
      const account: AccountKey = { user, host };
      const ban = await bans.recent(account);
      if (ban) throw new SaslFailure('account-disabled', `${user}@${host} is banned${ban.reason ? `: ${ban.reason}` : ''}`);
    },
    50,
    owner,
  );
  hooks.add(
    'password_login_check',
    async (user, host) => {
      const ban = await bans.recent({ user, host });
      if (ban) throw new Error(`${user}@${host} is banned`);
    },
    50,
    owner,
  );
  // The stored ban goes with the account's private storage; its cached answer must go too.
  hooks.add('remove_user', (user, host) => bans.forget({ user, host }), 50, owner);
  // Stored data replaced (a restore) or caches dropped by command: bans are read again.
  hooks.add('clear_cache', () => bans.dropAll(), 50, owner);
  hooks.add(
    'c2s_session_bound',
    async (session) => {
      const ban = await bans.recent({ user: session.account.user!, host: session.account.host });
      if (ban) await xmpp.kick(session, kickError(ban));
    },
    50,
    owner,
  );
}
