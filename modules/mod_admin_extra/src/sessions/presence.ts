/**
 * An account's presence as its contacts see it (get_presence), and setting a session's presence as if
 * its client had sent it (set_presence): the stanza goes through the session's own stream, so the kernel
 * records it and mod_presence broadcasts it exactly as for a client's presence.
 */
import { badArgument, defineCommand, failed, x, type C2SSession, type CommandHandler, type XmlElement } from '@service/plugin-api';
import { host, user } from '../args.js';
import type { AdminContext } from '../context.js';
import { accountSessions, connectedSession } from './target.js';

/** The `show` values a client may send (RFC 6121 §4.7.2.1); `available` or empty means none. */
const SHOWS = ['chat', 'away', 'dnd', 'xa'] as const;
/** A session's own broadcast presence is available or unavailable; other types need a recipient. */
const TYPES = ['available', 'unavailable'] as const;

const getPresence = defineCommand({
  name: 'get_presence',
  tags: ['session'],
  desc: 'Retrieve the resource with highest priority, and its presence (show and status message) for a given user',
  longdesc:
    'The presence of the account\'s available session with the highest priority (the first bound among equals): its full JID, `show` (available, chat, away, dnd or xa) and status text. ' +
    'When no session is available, the bare JID with `show` unavailable and an empty status. ' +
    'Fails with 404 when the account does not exist, and with 400 when the user name is invalid or the host is not served here.',
  note: 'resource with highest priority',
  args: [user, host],
  result: {
    name: 'presence',
    type: {
      object: [
        { name: 'jid', type: 'string', desc: 'Full JID of the resource with the highest priority (bare JID when none is available)' },
        { name: 'show', type: 'string', desc: 'available, chat, away, dnd, xa or unavailable' },
        { name: 'status', type: 'string', desc: 'Status text sent by the client (empty when none)' },
      ],
    },
  },
  examples: [{ args: { user: 'peter', host: 'myserver.com' }, result: { jid: 'peter@myserver.com/tka', show: 'dnd', status: 'Busy' } }],
});

const SET_PRESENCE_ARGS = [
  user,
  host,
  { name: 'resource', type: 'string', desc: 'Resource of the session', example: 'tka1' },
  { name: 'type', type: 'string', desc: 'Type: available or unavailable', example: 'available' },
  { name: 'show', type: 'string', desc: 'Show: chat, away, dnd or xa; available or empty for none', example: 'away' },
  { name: 'status', type: 'string', desc: 'Status text (may be empty)', example: 'BB' },
] as const;

const SET_PRESENCE_LONGDESC =
  'Sets the presence of the session `user@host/resource` as if its client had sent `<presence/>` without a recipient: the server records it (get_presence, status_list, message routing by priority) and broadcasts it to the contacts subscribed to the account and to its own available resources, the session included, when mod_presence is enabled. ' +
  '`type` unavailable sends unavailable presence (with the status text; `show` and `priority` are ignored). ' +
  'Fails with 400 for another type, a `show` other than chat, away, dnd, xa, available or empty, or a priority outside −128…127; with 404 when the account does not exist or has no session with that resource; with 422 when the session is waiting for its client to resume the stream (stream management) and has no connection to send on. Nothing is sent when it fails.';

const setPresenceV0 = defineCommand({
  name: 'set_presence',
  tags: ['session'],
  desc: 'Set presence of a session',
  longdesc: `${SET_PRESENCE_LONGDESC} API version 0: the priority is a string holding an integer (version 1 made it an integer).`,
  version: 0,
  args: [...SET_PRESENCE_ARGS, { name: 'priority', type: 'string', desc: 'Priority, an integer from -128 to 127', example: '7' }],
  result: { name: 'res', type: 'rescode' },
  examples: [{ args: { user: 'user1', host: 'myserver.com', resource: 'tka1', type: 'available', show: 'away', status: 'BB', priority: '7' }, result: 0 }],
});

const setPresenceV1 = defineCommand({
  name: 'set_presence',
  tags: ['session', 'v1'],
  desc: 'Set presence of a session',
  longdesc: SET_PRESENCE_LONGDESC,
  note: 'updated in 24.02',
  version: 1,
  args: [...SET_PRESENCE_ARGS, { name: 'priority', type: 'integer', desc: 'Priority, from -128 to 127', example: 7 }],
  result: { name: 'res', type: 'rescode' },
  examples: [{ args: { user: 'user1', host: 'myserver.com', resource: 'tka1', type: 'available', show: 'away', status: 'BB', priority: 7 }, result: 0 }],
});

export const presenceCommands = [getPresence, setPresenceV0, setPresenceV1] as const;

interface PresenceHandlers {
  get_presence: CommandHandler<typeof getPresence>;
  'set_presence@v0': CommandHandler<typeof setPresenceV0>;
  'set_presence@v1': CommandHandler<typeof setPresenceV1>;
}

export function presenceHandlers(ctx: AdminContext): PresenceHandlers {
  const setPresence = async (args: { user: string; host: string; resource: string; type: string; show: string; status: string }, priority: number) => {
    const stanza = presenceStanza(args.type, args.show, args.status, priority);
    const session = await connectedSession(ctx, args.user, args.host, args.resource);
    if (!(await session.sendAsClient(stanza))) {
      throw failed(`${session.jid.full} has no connection now (stream management keeps it while its client reconnects): nothing was sent`);
    }
  };
  return {
    get_presence: async ({ user: u, host: h }) => {
      const { bare, sessions } = await accountSessions(ctx, u, h);
      const top = highestPriority(sessions);
      if (!top) return { jid: bare, show: 'unavailable', status: '' };
      return { jid: top.jid.full, show: top.show, status: top.statusText };
    },
    'set_presence@v0': (args) => setPresence(args, integerPriority(args.priority)),
    'set_presence@v1': (args) => setPresence(args, args.priority),
  };
}

/** The available session with the highest priority; the first bound wins a tie. */
function highestPriority(sessions: readonly C2SSession[]): C2SSession | undefined {
  let top: C2SSession | undefined;
  for (const session of sessions) if (session.available && (!top || session.priority > top.priority)) top = session;
  return top;
}

function integerPriority(text: string): number {
  if (!/^\s*[+-]?\d{1,4}\s*$/.test(text)) throw badArgument('priority', `priority must be an integer from -128 to 127, got '${text}'`);
  return Number(text);
}

/** The broadcast presence a client would send; throws bad_argument naming the first invalid argument. */
function presenceStanza(type: string, show: string, status: string, priority: number): XmlElement {
  if (!(TYPES as readonly string[]).includes(type)) {
    throw badArgument('type', `type must be available or unavailable, got '${type}': a session's own presence has no other type (subscriptions and probes are addressed to someone)`);
  }
  const showValue = show === '' || show === 'available' ? undefined : show;
  if (showValue !== undefined && !(SHOWS as readonly string[]).includes(showValue)) {
    throw badArgument('show', `show must be one of ${SHOWS.join(', ')}, or available or empty for none; got '${show}'`);
  }
  if (!Number.isInteger(priority) || priority < -128 || priority > 127) throw badArgument('priority', `priority must be an integer from -128 to 127, got ${priority}`);
  if (type === 'unavailable') return x('presence', { type: 'unavailable' }, status ? x('status', {}, status) : undefined);
  return x('presence', {}, showValue ? x('show', {}, showValue) : undefined, status ? x('status', {}, status) : undefined, x('priority', {}, String(priority)));
}
