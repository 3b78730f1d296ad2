/**
 * What a session command acts on, looked up from its arguments: a served virtual host, an account, one
 * session. Each lookup fails with an error that names what is wrong: bad_argument for a value that cannot
 * be a host, user or resource (or a host this server does not serve), not_found for an account that does
 * not exist or a session that is not connected.
 */
import { InvalidJid, badArgument, notFound, resourceprep, type C2SSession } from '@service/plugin-api';
import type { AdminContext } from '../context.js';
import { servedHost, userName } from '../lookup.js';

export { servedHost };

/** The bare JID of `user@host` (normalized, on a served host); the account may not exist. */
export function bareJid(ctx: AdminContext, user: string, host: string): string {
  return `${userName(user)}@${servedHost(ctx, host)}`;
}

/** Fails with not_found unless the account is registered. */
export async function mustExist(ctx: AdminContext, bare: string): Promise<void> {
  const at = bare.indexOf('@');
  if (!(await ctx.services.accounts.exists(bare.slice(0, at), bare.slice(at + 1)))) throw notFound(`account ${bare} does not exist`);
}

/**
 * The sessions of an existing account, in binding order. An account with sessions exists; only one
 * without is looked up in storage, so that a typo reads "does not exist" rather than "no sessions".
 */
export async function accountSessions(ctx: AdminContext, user: string, host: string): Promise<{ bare: string; sessions: C2SSession[] }> {
  const bare = bareJid(ctx, user, host);
  const sessions = (await ctx.services.xmpp.sessions.byAccount(bare)).filter((s) => !s.closed);
  if (sessions.length === 0) await mustExist(ctx, bare);
  return { bare, sessions };
}

/** The connected session `user@host/resource`. */
export async function connectedSession(ctx: AdminContext, user: string, host: string, resource: string): Promise<C2SSession> {
  const bare = bareJid(ctx, user, host);
  let prepped: string;
  try {
    prepped = resourceprep(resource);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument('resource', err.message);
    throw err;
  }
  const session = await ctx.services.xmpp.sessions.get(`${bare}/${prepped}`);
  if (session && !session.closed) return session;
  await mustExist(ctx, bare);
  throw notFound(`${bare} has no session with resource '${prepped}'`);
}
