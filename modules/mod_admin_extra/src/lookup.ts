/**
 * The accounts and hosts commands name, checked before anything changes, the same way in every area: a
 * name that cannot be a JID part, or a host this server does not serve, is a 400 naming the argument; an
 * account that is not registered is a 404 naming it. (mod_vcard, mod_private, mod_roster… store data under
 * any name they are given: without this, a typo would write data nobody can read.)
 */
import { InvalidJid, badArgument, nameprep, nodeprep, notFound, type AccountKey } from '@service/plugin-api';
import type { AdminContext } from './context.js';

/** The argument names a command uses for an account: `user`/`host`, or add_rosteritem's `localuser`/`localhost`. */
export interface AccountArgs {
  readonly user: string;
  readonly host: string;
}

export const USER_HOST: AccountArgs = { user: 'user', host: 'host' };

/** A host this server serves, normalized. */
export function servedHost(ctx: AdminContext, text: string, argument = 'host'): string {
  let host: string;
  try {
    host = nameprep(text);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(argument, `${argument}: ${err.message}`);
    throw err;
  }
  const hosts = ctx.services.config().hosts;
  if (!hosts.some((served) => served.toLowerCase() === host)) throw badArgument(argument, `unknown virtual host '${text}': this server serves ${hosts.join(', ')}`);
  return host;
}

/** A user name, normalized (nodeprep). */
export function userName(text: string, argument = 'user'): string {
  try {
    return nodeprep(text);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(argument, `${argument}: ${err.message}`);
    throw err;
  }
}

/** The normalized account, which must be registered on a served host. */
export async function existingAccount(ctx: AdminContext, user: string, host: string, names: AccountArgs = USER_HOST): Promise<AccountKey> {
  const account = { user: userName(user, names.user), host: servedHost(ctx, host, names.host) };
  if (!(await ctx.services.accounts.exists(account.user, account.host))) throw notFound(`account ${account.user}@${account.host} does not exist`);
  return account;
}

export function bareJid(account: AccountKey): string {
  return `${account.user}@${account.host}`;
}
