/**
 * stats and stats_host: a few counters for monitoring scripts. The server-wide figures count every session
 * of the session directory, this-node figures only those bound here: the same unless a module reports
 * other nodes' sessions (a session source).
 */
import { badArgument, defineCommand, type HandlersFor } from '@service/plugin-api';
import { host } from '../args.js';
import type { AdminContext } from '../context.js';
import { servedHost } from '../lookup.js';

const SERVER_STATS = ['registeredusers', 'onlineusers', 'onlineusersnode', 'uptimeseconds', 'processes'] as const;
const HOST_STATS = ['registeredusers', 'onlineusers'] as const;

export const statsCommands = [
  defineCommand({
    name: 'stats',
    tags: ['statistics'],
    desc: 'Get some statistical value for the whole server',
    longdesc:
      '`registeredusers`: accounts on every virtual host. `onlineusers`: sessions (bound resources) on the server; `onlineusersnode`: sessions on this node, the same number as long as ' +
      'the server runs as one node. `uptimeseconds`: seconds since the server started (or last restarted). `processes`: the closest thing this server has to Erlang\'s process count: ' +
      'one per session plus the active resources of the Node.js event loop (`process.getActiveResourcesInfo()`: listening and connected sockets — client, HTTP and database connections —, ' +
      'timers and pending file operations). Any other name is a 400 that lists these.',
    args: [{ name: 'name', type: 'string', desc: `Statistic name: ${SERVER_STATS.join(', ')}`, example: 'registeredusers' }],
    result: { name: 'stat', type: 'integer', desc: 'Integer statistic value' },
    examples: [{ args: { name: 'registeredusers' }, result: 6 }],
  }),
  defineCommand({
    name: 'stats_host',
    tags: ['statistics'],
    desc: 'Get some statistical value for this host',
    longdesc:
      '`registeredusers`: accounts on the virtual host. `onlineusers`: sessions (bound resources) of its accounts. Any other name is a 400 that lists these; a host not served here is a 400.',
    args: [
      { name: 'name', type: 'string', desc: `Statistic name: ${HOST_STATS.join(', ')}`, example: 'registeredusers' },
      { ...host, desc: 'Server JID' },
    ],
    result: { name: 'stat', type: 'integer', desc: 'Integer statistic value' },
    examples: [{ args: { name: 'registeredusers', host: 'myserver.com' }, result: 6 }],
  }),
] as const;

export function statsHandlers(ctx: AdminContext): HandlersFor<typeof statsCommands> {
  const { accounts, xmpp, server } = ctx.services;
  /** Sessions bound on this node: the directory also lists those session sources report (other nodes'). */
  const onThisNode = async () => (await xmpp.sessions.all()).filter((s) => xmpp.isLocal(s)).length;
  return {
    stats: async ({ name }) => {
      switch (statName(name, SERVER_STATS)) {
        case 'registeredusers':
          return accounts.countUsers();
        case 'onlineusers':
          return xmpp.sessions.count();
        case 'onlineusersnode':
          return onThisNode();
        case 'uptimeseconds':
          return Math.floor((Date.now() - server.startedAt) / 1000);
        case 'processes':
          return (await onThisNode()) + process.getActiveResourcesInfo().length;
      }
    },
    stats_host: async ({ name, host: hostText }) => {
      const stat = statName(name, HOST_STATS);
      const vhost = servedHost(ctx, hostText);
      return stat === 'registeredusers' ? accounts.countUsers(vhost) : xmpp.sessions.countHost(vhost);
    },
  };
}

function statName<const N extends readonly string[]>(name: string, names: N): N[number] {
  if (!names.includes(name)) throw badArgument('name', `unknown statistic '${name}': use one of ${names.join(', ')}`);
  return name as N[number];
}
