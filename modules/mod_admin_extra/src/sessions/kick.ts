/**
 * kick_session: closes one session, telling its client why. The same stream error kick_user sends, with
 * the operator's reason as its text.
 */
import { StreamError, defineCommand, type HandlersFor } from '@service/plugin-api';
import { host, user } from '../args.js';
import type { AdminContext } from '../context.js';
import { connectedSession } from './target.js';

/** kick_user's text (kernel-commands/sessions.ts), for a kick without a reason. */
const DEFAULT_REASON = 'Kicked by administrator';

export const kickCommands = [
  defineCommand({
    name: 'kick_session',
    tags: ['session'],
    desc: 'Kick a user session',
    longdesc:
      `Closes the session \`user@host/resource\`: its client gets a <policy-violation/> stream error whose text is \`reason\` ("${DEFAULT_REASON}" when empty), and the session ends as if the connection had closed (unavailable presence to contacts; a session kept by stream management is not kept). ` +
      'Fails with 404 when the account does not exist or has no session with that resource, and with 400 when the user, host or resource is invalid.',
    args: [
      user,
      host,
      { name: 'resource', type: 'string', desc: 'User\'s resource', example: 'res1' },
      { name: 'reason', type: 'string', desc: 'Reason for closing session', example: 'Connection closed by administrator' },
    ],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'peter', host: 'myserver.com', resource: 'Psi', reason: 'Stuck connection' }, result: 0 }],
  }),
] as const;

export function kickHandlers(ctx: AdminContext): HandlersFor<typeof kickCommands> {
  return {
    kick_session: async ({ user: u, host: h, resource, reason }, call) => {
      const session = await connectedSession(ctx, u, h, resource);
      await ctx.services.xmpp.kick(session, new StreamError('policy-violation', reason.trim() || DEFAULT_REASON));
      call.log.info({ jid: session.jid.full }, 'kicked session %s', session.jid.full);
    },
  };
}
