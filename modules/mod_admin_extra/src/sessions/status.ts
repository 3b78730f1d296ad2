/**
 * Sessions by presence: status_list and status_list_host list the sessions whose `show` is the one asked
 * for (with their priority and status text), status_num and status_num_host count them. One pass over
 * the session manager; a vhost filter compares the session's host.
 */
import { badArgument, defineCommand, type C2SSession, type CommandHandler } from '@service/plugin-api';
import { host } from '../args.js';
import type { AdminContext } from '../context.js';
import { servedHost } from './target.js';

/** What a session's presence can be (get_presence's values). */
const STATUSES = ['available', 'chat', 'away', 'dnd', 'xa', 'unavailable'] as const;

const status = { name: 'status', type: 'string', desc: `Status type to check: ${STATUSES.join(', ')}`, example: 'dnd' } as const;

const FILTER_DOC =
  '`status` is compared with each session\'s presence: available (no <show/>), chat, away, dnd, xa, or unavailable (a session that has sent no presence, or sent unavailable). ' +
  'Every session counts, several of one account included.';

const LIST_V3 = {
  list: {
    object: [
      { name: 'jid', type: 'string', desc: 'Full JID of the session' },
      { name: 'priority', type: 'integer', desc: 'Priority of its presence' },
      { name: 'status', type: 'string', desc: 'Status text of its presence (empty when none)' },
    ],
  },
  item: 'userstatus',
} as const;

const LIST_V0 = {
  list: {
    object: [
      { name: 'user', type: 'string' },
      { name: 'host', type: 'string' },
      { name: 'resource', type: 'string' },
      { name: 'priority', type: 'integer' },
      { name: 'status', type: 'string', desc: 'Status text of its presence (empty when none)' },
    ],
  },
  item: 'userstatus',
} as const;

const V0_DOC = 'API versions 0 to 2: each session as user, host, resource, priority and status text (version 3 gives the full JID instead).';

const statusListV0 = defineCommand({
  name: 'status_list',
  tags: ['session'],
  desc: 'List of logged users with this status',
  longdesc: `The sessions on every vhost whose presence is \`status\`, sorted by JID. ${FILTER_DOC} Fails with 400 for another status. ${V0_DOC}`,
  version: 0,
  args: [status],
  result: { name: 'users', type: LIST_V0 },
  examples: [{ args: { status: 'dnd' }, result: [{ user: 'peter', host: 'myserver.com', resource: 'tka', priority: 6, status: 'Busy' }] }],
});

const statusListV3 = defineCommand({
  name: 'status_list',
  tags: ['session', 'v3'],
  desc: 'List of logged users with this status',
  longdesc: `The sessions on every vhost whose presence is \`status\`, sorted by JID, with their priority and status text. ${FILTER_DOC} Fails with 400 for another status.`,
  note: 'updated in 24.12',
  version: 3,
  args: [status],
  result: { name: 'users', type: LIST_V3 },
  examples: [{ args: { status: 'dnd' }, result: [{ jid: 'peter@myserver.com/tka', priority: 6, status: 'Busy' }] }],
});

const statusListHostV0 = defineCommand({
  name: 'status_list_host',
  tags: ['session'],
  desc: 'List of users logged in host with their statuses',
  longdesc: `The sessions of accounts of \`host\` whose presence is \`status\`, sorted by JID. ${FILTER_DOC} Fails with 400 for another status or a host not served here. ${V0_DOC}`,
  version: 0,
  args: [host, status],
  result: { name: 'users', type: LIST_V0 },
  examples: [{ args: { host: 'myserver.com', status: 'dnd' }, result: [{ user: 'peter', host: 'myserver.com', resource: 'tka', priority: 6, status: 'Busy' }] }],
});

const statusListHostV3 = defineCommand({
  name: 'status_list_host',
  tags: ['session', 'v3'],
  desc: 'List of users logged in host with their statuses',
  longdesc: `The sessions of accounts of \`host\` whose presence is \`status\`, sorted by JID, with their priority and status text. ${FILTER_DOC} Fails with 400 for another status or a host not served here.`,
  note: 'updated in 24.12',
  version: 3,
  args: [host, status],
  result: { name: 'users', type: LIST_V3 },
  examples: [{ args: { host: 'myserver.com', status: 'dnd' }, result: [{ jid: 'peter@myserver.com/tka', priority: 6, status: 'Busy' }] }],
});

const statusNum = defineCommand({
  name: 'status_num',
  tags: ['session', 'statistics'],
  desc: 'Number of logged users with this status',
  longdesc: `How many sessions on every vhost have the presence \`status\`. ${FILTER_DOC} Fails with 400 for another status.`,
  args: [status],
  result: { name: 'users', type: 'integer', desc: 'Number of connected sessions with given status type' },
  examples: [{ args: { status: 'dnd' }, result: 23 }],
});

const statusNumHost = defineCommand({
  name: 'status_num_host',
  tags: ['session', 'statistics'],
  desc: 'Number of logged users with this status in host',
  longdesc: `How many sessions of accounts of \`host\` have the presence \`status\`. ${FILTER_DOC} Fails with 400 for another status or a host not served here.`,
  args: [host, status],
  result: { name: 'users', type: 'integer', desc: 'Number of connected sessions with given status type' },
  examples: [{ args: { host: 'myserver.com', status: 'dnd' }, result: 23 }],
});

export const statusCommands = [statusListV0, statusListV3, statusListHostV0, statusListHostV3, statusNum, statusNumHost] as const;

interface StatusHandlers {
  'status_list@v0': CommandHandler<typeof statusListV0>;
  'status_list@v3': CommandHandler<typeof statusListV3>;
  'status_list_host@v0': CommandHandler<typeof statusListHostV0>;
  'status_list_host@v3': CommandHandler<typeof statusListHostV3>;
  status_num: CommandHandler<typeof statusNum>;
  status_num_host: CommandHandler<typeof statusNumHost>;
}

export function statusHandlers(ctx: AdminContext): StatusHandlers {
  /** The sessions with that presence, on one vhost or all; the arguments are checked before any lookup. */
  const matching = async (wanted: string, vhost?: string): Promise<C2SSession[]> => {
    if (!(STATUSES as readonly string[]).includes(wanted)) throw badArgument('status', `status must be one of ${STATUSES.join(', ')}, got '${wanted}'`);
    const out: C2SSession[] = [];
    for (const session of await ctx.services.xmpp.sessions.all()) {
      if (!session.closed && session.show === wanted && (vhost === undefined || session.jid.host === vhost)) out.push(session);
    }
    return out;
  };
  const sorted = (sessions: C2SSession[]) => sessions.sort((a, b) => (a.jid.full < b.jid.full ? -1 : a.jid.full > b.jid.full ? 1 : 0));
  const v3 = (s: C2SSession) => ({ jid: s.jid.full, priority: s.priority, status: s.statusText });
  const v0 = (s: C2SSession) => ({ user: s.jid.user!, host: s.jid.host, resource: s.resource, priority: s.priority, status: s.statusText });
  return {
    'status_list@v0': async ({ status: wanted }) => sorted(await matching(wanted)).map(v0),
    'status_list@v3': async ({ status: wanted }) => sorted(await matching(wanted)).map(v3),
    'status_list_host@v0': async ({ host: h, status: wanted }) => sorted(await matching(wanted, servedHost(ctx, h))).map(v0),
    'status_list_host@v3': async ({ host: h, status: wanted }) => sorted(await matching(wanted, servedHost(ctx, h))).map(v3),
    status_num: async ({ status: wanted }) => (await matching(wanted)).length,
    status_num_host: async ({ host: h, status: wanted }) => (await matching(wanted, servedHost(ctx, h))).length,
  };
}
