/**
 * delete_old_users and delete_old_users_vhost: remove the accounts nobody has used for `days` days —
 * offline, and either never logged in or last logged out before the cut-off (mod_last's record) — with
 * everything modules keep for them (the `remove_user` hook).
 *
 * Protection, as the spec gives it, and both rules apply to both commands (a deletion errs on the side of
 * keeping): an account is kept when the access rule `protect_old_users` allows it (e.g. `allow: admin`,
 * `deny: all`) or when the access rule `delete_old_users` denies it (e.g. `deny: admin`, `allow: all`). A
 * rule that is not configured protects nobody.
 *
 * Long on a big server (one account removal after another): progress is reported per account examined,
 * which servicectl shows on a terminal.
 */
import { badArgument, defineCommand, failed, hostKey, type CallContext, type CommandError, type HandlersFor } from '@service/plugin-api';
import { lastActivityService } from '@service/mod_last/api';
import { host } from '../args.js';
import { need, type AdminContext } from '../context.js';
import { servedHost } from '../lookup.js';

const DAY_MS = 86_400_000;
/** Removals in flight at once: each is a few statements; more only queue on the database pool. */
const CONCURRENCY = 4;

const days = { name: 'days', type: 'integer', desc: 'Last login age in days of accounts that should be removed', example: 30 } as const;

const PROTECTION =
  'Accounts are kept when the access rule `protect_old_users` allows them or the access rule `delete_old_users` denies them; for example, to keep admins: ' +
  '`access_rules: {protect_old_users: [{allow: admin}, {deny: all}]}`. A rule that is not configured protects nobody.';

export const oldUserCommands = [
  defineCommand({
    name: 'delete_old_users',
    tags: ['accounts', 'purge'],
    desc: 'Delete users that didn\'t log in last days, or that have never logged in',
    longdesc:
      'On every virtual host, removes each account that has no session now and whose last logout (mod_last) is more than `days` days ago, or that never logged in at all ' +
      '(whatever its age: HTTP Basic and XML-RPC calls are not logins), with everything stored for it. ' +
      `${PROTECTION} The answer lists the deleted accounts. Needs mod_last. ` +
      'Fails with 400 for a negative `days` and 422 when mod_last is not enabled; when a removal fails midway, 422 says how many were deleted before it.',
    note: 'also removes accounts that never logged in; an access rule named protect_old_users (allow admin, deny all) can protect admins',
    args: [days],
    result: { name: 'res', type: 'restuple', desc: 'How many accounts were deleted, and their JIDs' },
    examples: [{ args: { days: 30 }, result: 'Deleted 2 users: bob@myserver.com, carol@myserver.com' }],
  }),
  defineCommand({
    name: 'delete_old_users_vhost',
    tags: ['accounts', 'purge'],
    desc: 'Delete users that didn\'t log in last days in vhost, or that have never logged in',
    longdesc:
      'As `delete_old_users`, on one virtual host. ' +
      `${PROTECTION} Fails as \`delete_old_users\` does, and with 400 for a host not served here.`,
    note: 'access rule named delete_old_users (deny admin, allow all) can protect admins',
    args: [{ ...host, desc: 'Server name', example: 'myserver.com' }, days],
    result: { name: 'res', type: 'restuple', desc: 'How many accounts were deleted, and their JIDs' },
    examples: [{ args: { host: 'myserver.com', days: 30 }, result: 'Deleted 2 users: bob@myserver.com, carol@myserver.com' }],
  }),
] as const;

export function oldUserHandlers(ctx: AdminContext): HandlersFor<typeof oldUserCommands> {
  return {
    delete_old_users: ({ days }, call) => deleteOldUsers(ctx, 'delete_old_users', [...ctx.services.config().hosts], days, call),
    delete_old_users_vhost: ({ host, days }, call) => deleteOldUsers(ctx, 'delete_old_users_vhost', [servedHost(ctx, host)], days, call),
  };
}

async function deleteOldUsers(ctx: AdminContext, command: string, hosts: readonly string[], days: number, call: CallContext): Promise<string> {
  if (days < 0) throw badArgument('days', `days must be 0 or more, not ${days}`);
  const last = need(ctx, lastActivityService, command);
  const { accounts, xmpp } = ctx.services;
  const access = ctx.services.access();
  const cutoff = Date.now() - days * DAY_MS;
  const isProtected = (user: string, server: string) => {
    const subject = { user, server };
    return (
      (access.hasRule('protect_old_users') && access.matchRule('protect_old_users', subject) === 'allow') ||
      (access.hasRule('delete_old_users') && access.matchRule('delete_old_users', subject) === 'deny')
    );
  };
  /** Old now: checked again right before the removal, as the account may have logged in since the listing. */
  const stillOld = async (user: string, server: string) => {
    if ((await xmpp.sessions.byAccount(`${user}@${server}`)).length > 0) return false;
    const record = await last.get(user, server);
    return record === undefined || record.timestamp < cutoff;
  };

  const candidates: Array<{ user: string; host: string }> = [];
  let examined = 0;
  const listed = await Promise.all(hosts.map(async (h) => ({ host: hostKey(h), users: await accounts.listUsers(h) })));
  const total = listed.reduce((sum, l) => sum + l.users.length, 0);
  for (const { host: h, users } of listed) {
    const recent = new Set(await last.activeSince(h, cutoff));
    for (const user of users) {
      if (recent.has(user) || isProtected(user, h)) examined++;
      else candidates.push({ user, host: h });
    }
  }
  call.progress(examined, total, 'accounts');

  const deleted: string[] = [];
  let failure: { jid: string; err: unknown } | undefined;
  let next = 0;
  const worker = async () => {
    while (failure === undefined && next < candidates.length) {
      const { user, host: h } = candidates[next++]!;
      const jid = `${user}@${h}`;
      try {
        if (await stillOld(user, h)) {
          await accounts.unregister(user, h);
          deleted.push(jid);
        }
      } catch (err) {
        // Removed meanwhile by someone else: not ours to report.
        if ((err as CommandError).kind !== 'not_found') failure ??= { jid, err };
      }
      call.progress(++examined, total, 'accounts');
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, candidates.length) }, worker));
  deleted.sort();
  if (failure) {
    call.log.error({ err: failure.err, account: failure.jid, deleted: deleted.length }, '%s stopped: removing %s failed', command, failure.jid);
    throw failed(`removing ${failure.jid} failed (${(failure.err as Error).message}); ${deleted.length} account(s) had been deleted before: ${deleted.join(', ') || 'none'}`);
  }
  call.log.info({ deleted: deleted.length, days }, '%s deleted %d account(s)', command, deleted.length);
  return deleted.length ? `Deleted ${deleted.length} users: ${deleted.join(', ')}` : 'Deleted 0 users';
}
