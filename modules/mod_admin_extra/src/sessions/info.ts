/**
 * What is connected: every session with its details (connected_users_info), an account's sessions
 * (user_sessions_info, num_resources, resource_num) and a vhost's (connected_users_vhost). Read from the
 * session manager only: nothing here touches storage unless an account has no session (to tell "no
 * session" from "no such account").
 */
import { badArgument, defineCommand, type C2SSession, type HandlersFor } from '@service/plugin-api';
import { host, user } from '../args.js';
import type { AdminContext } from '../context.js';
import { accountSessions, servedHost } from './target.js';

/** The spec's Session resource without the JID, in the spec's order. */
const SESSION_FIELDS = [
  { name: 'connection', type: 'string', desc: 'The transport: c2s (TCP without TLS), c2s_tls (STARTTLS or direct TLS) or websocket' },
  { name: 'ip', type: 'string', desc: 'The client\'s address (IPv4-mapped IPv6 addresses unwrapped)' },
  { name: 'port', type: 'integer', desc: 'The client\'s source port' },
  { name: 'priority', type: 'integer', desc: 'The priority of its last presence (0 before any)' },
  { name: 'node', type: 'string', desc: 'The node serving it (node_name)' },
  { name: 'uptime', type: 'integer', desc: 'Seconds since the resource was bound' },
  { name: 'status', type: 'string', desc: 'Its presence: available, chat, away, dnd, xa, or unavailable (no presence sent, or unavailable sent)' },
  { name: 'resource', type: 'string', desc: 'The resource' },
  { name: 'statustext', type: 'string', desc: 'The status text of its last presence (empty when none)' },
] as const;

const SESSION_EXAMPLE = {
  connection: 'c2s_tls',
  ip: '203.0.113.7',
  port: 42656,
  priority: 8,
  node: 'service@localhost',
  uptime: 231,
  status: 'dnd',
  resource: 'tka',
  statustext: 'In a meeting',
};

export const infoCommands = [
  defineCommand({
    name: 'connected_users_info',
    tags: ['session'],
    desc: 'List all established sessions and their information',
    longdesc:
      'Every bound session on every vhost, sorted by full JID, with its transport, address, priority, node, uptime in seconds, presence (`status`: available, chat, away, dnd, xa, or unavailable for a session that has sent no presence or sent unavailable) and status text. ' +
      'A session kept by stream management while its client reconnects is listed with the address it had. This command does not fail.',
    args: [],
    result: {
      name: 'connected_users_info',
      type: { list: { object: [{ name: 'jid', type: 'string', desc: 'The session\'s full JID' }, ...SESSION_FIELDS] }, item: 'sessions' },
    },
    examples: [{ args: {}, result: [{ jid: 'user1@myserver.com/tka', ...SESSION_EXAMPLE }] }],
  }),
  defineCommand({
    name: 'user_sessions_info',
    tags: ['session'],
    desc: 'Get information about all sessions of a user',
    longdesc:
      'The sessions of one account, sorted by resource, with the same details as connected_users_info (without the JID). An existing account with no session gives an empty list. ' +
      'Fails with 404 when the account does not exist, and with 400 when the user name is invalid or the host is not served here.',
    args: [user, host],
    result: { name: 'sessions_info', type: { list: { object: SESSION_FIELDS }, item: 'session' } },
    examples: [{ args: { user: 'peter', host: 'myserver.com' }, result: [SESSION_EXAMPLE] }],
  }),
  defineCommand({
    name: 'connected_users_vhost',
    tags: ['session'],
    desc: 'Get the list of established sessions in a vhost',
    longdesc: 'The full JIDs of the sessions of accounts of one vhost, sorted. Fails with 400 when the host is not served here.',
    args: [{ ...host, desc: 'Server name' }],
    result: { name: 'connected_users_vhost', type: { list: 'string', item: 'sessions' }, desc: 'Full JIDs, sorted' },
    examples: [{ args: { host: 'myserver.com' }, result: ['user1@myserver.com/tka', 'user2@myserver.com/laptop'] }],
  }),
  defineCommand({
    name: 'num_resources',
    tags: ['session'],
    desc: 'Get the number of resources of a user',
    longdesc: 'How many sessions the account has (0 when it is offline). Fails with 404 when the account does not exist, and with 400 when the user name is invalid or the host is not served here.',
    args: [user, host],
    result: { name: 'resources', type: 'integer', desc: 'Number of active resources for a user' },
    examples: [{ args: { user: 'peter', host: 'myserver.com' }, result: 5 }],
  }),
  defineCommand({
    name: 'resource_num',
    tags: ['session'],
    desc: 'Resource string of a session number',
    longdesc:
      'The resource of the account\'s session number `num`, counting from 1 in the order user_resources lists them (sorted). ' +
      'Fails with 400 when `num` is not between 1 and the number of sessions (an offline account has none), 404 when the account does not exist.',
    args: [user, host, { name: 'num', type: 'integer', desc: 'ID of resource to return, from 1', example: 2 }],
    result: { name: 'resource', type: 'string', desc: 'Name of user resource' },
    examples: [{ args: { user: 'peter', host: 'myserver.com', num: 2 }, result: 'Psi' }],
  }),
] as const;

export function infoHandlers(ctx: AdminContext): HandlersFor<typeof infoCommands> {
  const { sessions } = ctx.services.xmpp;
  /** Sorting by the same key the list is read by: the JID or the resource, in code-point order. */
  const byKey = <T>(key: (item: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  return {
    connected_users_info: async () => {
      const all = await sessions.all();
      const describe = describer(ctx);
      const out = [];
      for (const session of all) if (!session.closed) out.push({ jid: session.jid.full, ...describe(session) });
      return out.sort(byKey((s) => s.jid));
    },
    user_sessions_info: async ({ user: u, host: h }) => {
      const describe = describer(ctx);
      const { sessions: mine } = await accountSessions(ctx, u, h);
      return mine.map(describe).sort(byKey((s) => s.resource));
    },
    connected_users_vhost: async ({ host: h }) => {
      const vhost = servedHost(ctx, h);
      const out: string[] = [];
      for (const session of await sessions.all()) if (!session.closed && session.jid.host === vhost) out.push(session.jid.full);
      return out.sort();
    },
    num_resources: async ({ user: u, host: h }) => (await accountSessions(ctx, u, h)).sessions.length,
    resource_num: async ({ user: u, host: h, num }) => {
      const { bare, sessions: mine } = await accountSessions(ctx, u, h);
      const resources = mine.map((s) => s.resource).sort();
      if (resources.length === 0) throw badArgument('num', `${bare} has no session: there is no resource number ${num}`);
      if (num < 1 || num > resources.length) throw badArgument('num', `num must be between 1 and ${resources.length} (the sessions of ${bare}), got ${num}`);
      return resources[num - 1]!;
    },
  };
}

interface SessionFields {
  connection: string;
  ip: string;
  port: number;
  priority: number;
  node: string;
  uptime: number;
  status: string;
  resource: string;
  statustext: string;
}

/** The Session fields of a session, as of now; one clock reading and node name per call. */
function describer(ctx: AdminContext): (session: C2SSession) => SessionFields {
  const now = Date.now();
  const node = ctx.services.config().node_name;
  return (session) => ({
    connection: session.connection,
    ip: session.ip,
    port: session.port,
    priority: session.priority,
    node: session.node ?? node,
    uptime: Math.max(0, Math.floor((now - session.startedAt) / 1000)),
    status: session.show,
    resource: session.resource,
    statustext: session.statusText,
  });
}
