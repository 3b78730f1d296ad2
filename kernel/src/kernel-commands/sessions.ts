/**
 * Session commands that are always present: connected_users, connected_users_number, kick_user,
 * kick_users, user_resources.
 */
import { defineCommand, type HandlersFor } from '@service/plugin-api';
import type { KernelServices } from '../modules/services.js';
import { StreamError } from '@service/plugin-api';

const user = { name: 'user', type: 'string', desc: 'User name', example: 'peter' } as const;
const host = { name: 'host', type: 'string', desc: 'Server name', example: 'myserver.com' } as const;
const KICK_TEXT = 'Kicked by administrator';

export const sessionCommands = [
  defineCommand({
    name: 'connected_users',
    tags: ['session'],
    desc: 'List all established sessions',
    longdesc: 'The full JIDs of every bound session on every vhost, sorted.',
    args: [],
    result: { name: 'connected_users', type: { list: 'string', item: 'sessions' }, desc: 'Full JIDs, sorted' },
    examples: [{ args: {}, result: ['user1@example.com/phone', 'user2@example.com/tablet'] }],
  }),
  defineCommand({
    name: 'connected_users_number',
    tags: ['session', 'statistics'],
    desc: 'Get the number of established sessions',
    args: [],
    result: { name: 'num_sessions', type: 'integer' },
    examples: [{ args: {}, result: 2 }],
  }),
  defineCommand({
    name: 'kick_user',
    tags: ['session'],
    desc: 'Disconnect user\'s active sessions',
    longdesc: 'API version 0 and 1: answers the number of sessions closed.',
    version: 0,
    args: [user, host],
    result: { name: 'num_resources', type: 'integer', desc: 'Number of resources that were kicked' },
    examples: [{ args: { user: 'peter', host: 'myserver.com' }, result: 3 }],
  }),
  defineCommand({
    name: 'kick_user',
    tags: ['session', 'v2'],
    desc: 'Disconnect user\'s active sessions',
    longdesc: `Closes every session of the account; each client gets a <policy-violation/> stream error with the text "${KICK_TEXT}". An account with no session is not an error: the answer says 0; an account that is not registered is (404).`,
    note: 'modified in 24.06',
    version: 2,
    args: [user, host],
    result: { name: 'res', type: 'restuple', desc: 'How many sessions were closed' },
    examples: [{ args: { user: 'peter', host: 'myserver.com' }, result: 'Kicked sessions: 2' }],
  }),
  defineCommand({
    name: 'kick_users',
    tags: ['session'],
    desc: 'Disconnect all given host users\' active sessions',
    note: 'added in 25.04',
    args: [host],
    result: { name: 'num_sessions', type: 'integer', desc: 'Number of sessions closed' },
    examples: [{ args: { host: 'myserver.com' }, result: 4 }],
  }),
  defineCommand({
    name: 'user_resources',
    tags: ['session'],
    desc: 'List user\'s connected resources',
    args: [user, host],
    result: { name: 'resources', type: { list: 'string', item: 'resource' }, desc: 'Resources, sorted' },
    examples: [{ args: { user: 'user1', host: 'example.com' }, result: ['phone', 'tablet'] }],
  }),
] as const;

export function sessionHandlers(services: KernelServices): HandlersFor<typeof sessionCommands> {
  const { xmpp, accounts } = services;
  // Like every per-account command: an account that is not registered is a 404, not an empty answer.
  const account = async (user: string, host: string) => {
    const key = await accounts.existing(user, host);
    return `${key.user}@${key.host}`;
  };
  const kick = (bare: string) => xmpp.kickAccount(bare, new StreamError('policy-violation', KICK_TEXT));
  return {
    connected_users: async () => (await xmpp.sessions.all()).map((s) => s.jid.full).sort(),
    connected_users_number: () => xmpp.sessions.count(),
    'kick_user@v0': async ({ user: u, host: h }: { user: string; host: string }) => kick(await account(u, h)),
    'kick_user@v2': async ({ user: u, host: h }: { user: string; host: string }) => `Kicked sessions: ${await kick(await account(u, h))}`,
    kick_users: async ({ host: h }: { host: string }) => {
      const vhost = accounts.servedHost(h);
      let n = 0;
      // Every account with a session on any node (kickAccount closes another node's through its outlet), taken once.
      for (const bare of await xmpp.sessions.accounts()) if (bare.endsWith(`@${vhost}`)) n += await kick(bare);
      return n;
    },
    user_resources: async ({ user: u, host: h }: { user: string; host: string }) => (await xmpp.sessions.byAccount(await account(u, h))).map((s) => s.resource).sort(),
  } as unknown as HandlersFor<typeof sessionCommands>;
}
