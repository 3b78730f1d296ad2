/**
 * The accounts and hosts the account commands act on, checked before anything changes: a name that cannot
 * be a JID part or a host this server does not serve is a 400 naming the argument; an account that is not
 * registered is a 404 naming it.
 */
import { accountKey, badArgument, hostKey, notFound, type AccountKey } from '@service/kernel';
import type { AdminContext } from '../context.js';

/** A served virtual host, normalized. */
export function servedHost(ctx: AdminContext, text: string): string {
  const host = hostKey(text);
  const hosts = ctx.services.config().hosts;
  if (!hosts.some((served) => served.toLowerCase() === host)) {
    throw badArgument('host', `unknown virtual host '${text}': this server serves ${hosts.join(', ')}`);
  }
  return host;
}

/** The normalized account, which must be registered. */
export async function existingAccount(ctx: AdminContext, user: string, host: string): Promise<AccountKey> {
  const account = accountKey(user, servedHost(ctx, host));
  if (!(await ctx.services.accounts.exists(account.user, account.host))) throw notFound(`account ${account.user}@${account.host} does not exist`);
  return account;
}

export function bareJid(account: AccountKey): string {
  return `${account.user}@${account.host}`;
}
