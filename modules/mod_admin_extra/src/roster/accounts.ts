/**
 * The accounts and contacts roster commands name. A roster's owner must be an existing account of a host
 * served here (mod_roster would store a roster under any name, which nobody could ever log in to read); a
 * contact may be any valid JID, a remote one or a local name not registered (yet) included, as in any
 * client's roster.
 */
import { InvalidJid, Jid, badArgument, nameprep, nodeprep, notFound } from '@service/kernel';
import type { AdminContext } from '../context.js';

/** The argument names a command uses for an account: `user`/`host`, or add_rosteritem's `localuser`/`localhost`. */
export interface AccountArgs {
  readonly user: string;
  readonly host: string;
}

export const USER_HOST: AccountArgs = { user: 'user', host: 'host' };

/** A host this server serves, normalized; bad_argument naming `argument` otherwise. */
export function servedHost(ctx: AdminContext, text: string, argument = 'host'): string {
  let host: string;
  try {
    host = nameprep(text);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(argument, `${argument}: ${err.message}`);
    throw err;
  }
  const hosts = ctx.services.config().hosts;
  if (!hosts.includes(host)) throw badArgument(argument, `unknown virtual host '${text}': this server serves ${hosts.join(', ')}`);
  return host;
}

/** The bare JID of an existing local account, or bad_argument / not_found naming what is wrong. */
export async function localAccount(ctx: AdminContext, user: string, host: string, names: AccountArgs = USER_HOST): Promise<Jid> {
  const vhost = servedHost(ctx, host, names.host);
  let name: string;
  try {
    name = nodeprep(user);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(names.user, `${names.user}: ${err.message}`);
    throw err;
  }
  if (!(await ctx.services.accounts.exists(name, vhost))) throw notFound(`account ${name}@${vhost} does not exist`);
  return new Jid(name, vhost, undefined);
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
