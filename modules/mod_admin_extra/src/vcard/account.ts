/**
 * The account a command acts on must exist: mod_vcard, mod_private, mod_last and mod_offline store data
 * under any name they are given, so without this check a typo in `user` would write data nobody can
 * read, and a read would answer "empty" for an account that is not there.
 */
import { accountKey, notFound, type AccountKey } from '@service/kernel';
import type { AdminContext } from '../context.js';

/**
 * The normalized account, or: bad_argument naming `user` or `host` for a name that cannot be a JID part or
 * a host this server does not serve; not_found naming the account when it is not registered.
 */
export async function existingAccount(ctx: AdminContext, user: string, host: string): Promise<AccountKey> {
  const account = accountKey(user, host);
  if (!(await ctx.services.accounts.exists(account.user, account.host))) throw notFound(`account ${account.user}@${account.host} does not exist`);
  return account;
}
