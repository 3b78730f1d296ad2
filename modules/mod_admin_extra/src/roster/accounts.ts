/**
 * The accounts and contacts roster commands name. A roster's owner must be an existing account of a host
 * served here (mod_roster would store a roster under any name, which nobody could ever log in to read); a
 * contact may be any valid JID, a remote one or a local name not registered (yet) included, as in any
 * client's roster.
 */
import { InvalidJid, Jid, badArgument, nameprep, nodeprep } from '@service/plugin-api';
import type { AdminContext } from '../context.js';
import { existingAccount, USER_HOST, type AccountArgs } from '../lookup.js';

export { servedHost, USER_HOST, type AccountArgs } from '../lookup.js';

/** The bare JID of an existing local account, or bad_argument / not_found naming what is wrong. */
export async function localAccount(ctx: AdminContext, user: string, host: string, names: AccountArgs = USER_HOST): Promise<Jid> {
  const account = await existingAccount(ctx, user, host, names);
  return new Jid(account.user, account.host, undefined);
}

/**
 * A contact's bare JID from its user and host. An empty user names a server or gateway (`host` alone),
 * as in ejabberd's jid:make.
 */
export function contactJid(user: string, host: string, names: AccountArgs = USER_HOST): Jid {
  let domain: string;
  try {
    domain = nameprep(host);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(names.host, `${names.host}: ${err.message}`);
    throw err;
  }
  if (!domain) throw badArgument(names.host, `${names.host} must not be empty`);
  if (user === '') return new Jid(undefined, domain, undefined);
  try {
    return new Jid(nodeprep(user), domain, undefined);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(names.user, `${names.user}: ${err.message}`);
    throw err;
  }
}

/** Whether `jid` is an account of this server (a contact whose side of the subscription we keep). */
export async function isLocalAccount(ctx: AdminContext, jid: Jid): Promise<boolean> {
  if (jid.user === undefined || !ctx.services.config().hosts.includes(jid.host)) return false;
  return ctx.services.accounts.exists(jid.user, jid.host);
}
