/**
 * Last activity (mod_last, XEP-0012): get_last, set_last. The record is what jabber:iq:last answers to
 * the account and its contacts: when its last session ended and the status text it left.
 */
import { Jid, badArgument, defineCommand, type HandlersFor } from '@service/plugin-api';
import { lastActivityService } from '@service/mod_last/api';
import { host, user } from '../args.js';
import { need, type AdminContext } from '../context.js';
import { existingAccount } from '../lookup.js';
import { checkXmlText } from './xml-text.js';

/** The status of an account with a session now (ejabberd's word). */
export const ONLINE = 'ONLINE';
/** The status of an account with no recorded activity, and its timestamp: the epoch, "never". */
export const NOT_FOUND = 'NOT FOUND';
export const NEVER = '1970-01-01T00:00:00Z';

/** The largest timestamp XEP-0082's four-digit year can write: 9999-12-31T23:59:59Z. */
const MAX_TIMESTAMP = 253402300799;

/** XEP-0082 DateTime in UTC, to the second (what set_last stores): 2017-02-23T22:25:28Z. */
export function xep0082(milliseconds: number): string {
  return new Date(Math.floor(milliseconds / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export const lastCommands = [
  defineCommand({
    name: 'get_last',
    tags: ['last'],
    desc: 'Get last activity information',
    longdesc:
      'Timestamp is UTC and XEP-0082 format, to the second, for example `2017-02-23T22:25:28Z`. ' +
      `While the account has a session (see user_resources), the timestamp is now and the status \`${ONLINE}\`. ` +
      'Otherwise, when its last session ended (or what set_last recorded) and the status text of its last presence (empty when it left none). ' +
      `An account with no recorded activity (it never logged in since mod_last was enabled) answers \`{"timestamp": "${NEVER}", "status": "${NOT_FOUND}"}\`. ` +
      'Fails with 404 when the account does not exist, with 400 when the host is not served here.',
    args: [user, host],
    result: {
      name: 'last_activity',
      type: { object: [{ name: 'timestamp', type: 'string', desc: 'UTC, XEP-0082' }, { name: 'status', type: 'string' }] },
      desc: 'Last activity timestamp and status',
    },
    examples: [{ args: { user: 'user1', host: 'myserver.com' }, result: { timestamp: '2017-06-30T14:32:16Z', status: 'ONLINE' } }],
  }),
  defineCommand({
    name: 'set_last',
    tags: ['last'],
    desc: 'Set last activity information',
    longdesc:
      'Timestamp is the seconds since 1970-01-01 00:00:00 UTC, for example the output of `date +%s`. Replaces the recorded last activity: ' +
      'get_last answers it (while the account has no session), and contacts asking with jabber:iq:last get the seconds since then and the status. When a session of the account ends later, its logout is recorded over it. ' +
      `Fails with 404 when the account does not exist, with 400, changing nothing, when the host is not served here, the timestamp is negative or after year 9999 (${MAX_TIMESTAMP}), or the status holds a character XML cannot carry.`,
    args: [
      user,
      host,
      { name: 'timestamp', type: 'integer', desc: 'Number of seconds since epoch', example: 1500045311 },
      { name: 'status', type: 'string', desc: 'Status message', example: 'GoSleeping' },
    ],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'user1', host: 'myserver.com', timestamp: 1500045311, status: 'GoSleeping' }, result: 0 }],
  }),
] as const;

export function lastHandlers(ctx: AdminContext): HandlersFor<typeof lastCommands> {
  const activity = (command: string) => need(ctx, lastActivityService, command);
  return {
    get_last: async (args) => {
      const api = activity('get_last');
      const account = await existingAccount(ctx, args.user, args.host);
      // Any session counts, available or not: an account connected right now is not "last seen" in the past.
      const bare = new Jid(account.user, account.host, undefined).bare;
      if ((await ctx.services.xmpp.sessions.byAccount(bare)).some((session) => !session.closed)) return { timestamp: xep0082(Date.now()), status: ONLINE };
      const stored = await api.get(account.user, account.host);
      if (!stored) return { timestamp: NEVER, status: NOT_FOUND };
      return { timestamp: xep0082(stored.timestamp), status: stored.status };
    },
    set_last: async (args) => {
      const api = activity('set_last');
      if (args.timestamp < 0 || args.timestamp > MAX_TIMESTAMP) {
        throw badArgument('timestamp', `argument 'timestamp' must be seconds since 1970-01-01 between 0 and ${MAX_TIMESTAMP} (9999-12-31T23:59:59Z), got ${args.timestamp}`);
      }
      checkXmlText('status', args.status);
      const account = await existingAccount(ctx, args.user, args.host);
      await api.set(account.user, account.host, args.timestamp * 1000, args.status);
    },
  };
}
