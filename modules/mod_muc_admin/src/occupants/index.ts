/**
 * Who is in a room and what was said there: get_room_occupants, get_room_occupants_number,
 * get_room_history, get_user_rooms; and send_direct_invitation (XEP-0249), which brings people in. All
 * read the room's live state (occupants joined now, the history a joining occupant would get).
 */
import { badArgument, defineCommand, serialize, type HandlersFor, type Jid } from '@service/plugin-api';
import { RENAME_NAME, ROOM_ERRORS, host, room, service, user } from '../args.js';
import type { MucAdminContext } from '../context.js';
import { mucCall } from '../errors.js';
import { accountJid, existingRoom, jidArg } from '../lookup.js';

const NONE = 'none';
const INVITE_DOC =
  'Each user gets a XEP-0249 invitation (<x xmlns="jabber:x:conference"/>) from the room, with the password and the reason unless they are `none`. ' +
  'Sending is asynchronous (as in ejabberd since 20.12): the command may return before every invitation is delivered. ' +
  `Fails, inviting nobody, with 400 naming users when the list is empty or holds a text that is not a JID. ${ROOM_ERRORS}`;

/** XEP-0082 date and time in UTC, with milliseconds. */
function timestamp(milliseconds: number): string {
  return new Date(milliseconds).toISOString();
}

export const occupantCommands = [
  defineCommand({
    name: 'get_room_occupants',
    tags: ['muc_room'],
    desc: 'Get the list of occupants of a MUC room',
    longdesc: `Every occupant joined now: its real full JID, its nick in the room and its role (moderator, participant or visitor). ${ROOM_ERRORS}`,
    args: [room, service],
    argsRename: RENAME_NAME,
    result: {
      name: 'occupants',
      type: {
        list: {
          object: [
            { name: 'jid', type: 'string' },
            { name: 'nick', type: 'string' },
            { name: 'role', type: 'string' },
          ],
        },
        item: 'occupant',
      },
      desc: 'The list of occupants with JID, nick and role',
    },
    examples: [{ args: { room: 'room1', service: 'conference.example.com' }, result: [{ jid: 'user1@example.com/psi', nick: 'User 1', role: 'owner' }] }],
  }),
  defineCommand({
    name: 'get_room_occupants_number',
    tags: ['muc_room'],
    desc: 'Get the number of occupants of a MUC room',
    longdesc: `How many occupants are joined now. ${ROOM_ERRORS}`,
    args: [room, service],
    argsRename: RENAME_NAME,
    result: { name: 'occupants', type: 'integer', desc: 'Number of room occupants' },
    examples: [{ args: { room: 'room1', service: 'conference.example.com' }, result: 7 }],
  }),
  defineCommand({
    name: 'get_room_history',
    tags: ['muc_room'],
    desc: 'Get history messages stored inside MUC room state',
    longdesc:
      'The messages the room keeps in its history (what a joining occupant gets, XEP-0045 §7.2.15), oldest first: when the room received each (XEP-0082, UTC) and the message as occupants got it, as XML text. ' +
      ROOM_ERRORS,
    note: 'added in 23.04',
    args: [room, service],
    argsRename: RENAME_NAME,
    result: {
      name: 'history',
      type: {
        list: {
          object: [
            { name: 'timestamp', type: 'string' },
            { name: 'message', type: 'string' },
          ],
        },
        item: 'entry',
      },
      desc: 'The history messages',
    },
    examples: [
      {
        args: { room: 'room1', service: 'conference.example.com' },
        result: [{ timestamp: '2023-04-20T10:00:00.000Z', message: "<message xmlns='jabber:client' type='groupchat' from='room1@conference.example.com/User1'><body>Hello</body></message>" }],
      },
    ],
  }),
  defineCommand({
    name: 'get_user_rooms',
    tags: ['muc'],
    desc: 'Get the list of rooms where this user is occupant',
    longdesc:
      'The rooms (room@service), on every MUC service, where a session of the account is joined now. Empty for an account in no room. Fails with 400 when user or host is not a valid JID part.',
    args: [user, host],
    result: { name: 'rooms', type: { list: 'string', item: 'room' }, desc: 'The list of rooms' },
    examples: [{ args: { user: 'tom', host: 'example.com' }, result: ['room1@conference.example.com', 'room2@conference.example.com'] }],
  }),
  defineCommand({
    name: 'send_direct_invitation',
    tags: ['muc_room'],
    desc: 'Send a direct invitation to several destinations',
    longdesc: `API version 0: the users as one text, JIDs separated by \`:\`. ${INVITE_DOC}`,
    version: 0,
    args: [
      { name: 'name', type: 'string', desc: 'Room name', example: 'room1' },
      service,
      { name: 'password', type: 'string', desc: 'Password, or `none`', example: '' },
      { name: 'reason', type: 'string', desc: 'Reason text, or `none`', example: 'Check this out!' },
      { name: 'users', type: 'string', desc: 'Users JIDs separated with `:` characters', example: 'user2@localhost:user3@example.com' },
    ],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { name: 'room1', service: 'conference.example.com', password: '', reason: 'Check this out!', users: 'user2@localhost:user3@example.com' }, result: 0 }],
  }),
  defineCommand({
    name: 'send_direct_invitation',
    tags: ['muc_room', 'v1'],
    desc: 'Send a direct invitation to several destinations',
    longdesc: INVITE_DOC,
    note: 'updated in 24.02',
    version: 1,
    args: [
      room,
      service,
      { name: 'password', type: 'string', desc: 'Password, or `none`', example: '' },
      { name: 'reason', type: 'string', desc: 'Reason text, or `none`', example: 'Check this out!' },
      { name: 'users', type: { list: 'string', item: 'jid' }, desc: 'List of users JIDs', example: ['user2@localhost', 'user3@example.com'] },
    ],
    argsRename: RENAME_NAME,
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { room: 'room1', service: 'conference.example.com', password: '', reason: 'Check this out!', users: ['user2@localhost', 'user3@example.com'] }, result: 0 }],
  }),
] as const;

export function occupantHandlers(ctx: MucAdminContext): HandlersFor<typeof occupantCommands> {
  const invite = async (roomText: string, serviceText: string, password: string, reason: string, users: readonly string[], roomArgument: string) => {
    if (users.length === 0) throw badArgument('users', 'users must name at least one JID to invite, got none');
    const jids: Jid[] = users.map((text) => jidArg('users', text));
    const ref = await existingRoom(ctx, roomText, serviceText, { room: roomArgument, service: 'service' });
    const options = { ...(password !== NONE && password !== '' ? { password } : {}), ...(reason !== NONE && reason !== '' ? { reason } : {}) };
    await mucCall(() => ctx.muc().inviteDirect(ref.room, ref.service, jids, options), 'users');
  };
  const handlers: Omit<HandlersFor<typeof occupantCommands>, 'send_direct_invitation'> = {
    get_room_occupants: async (args) => {
      const ref = await existingRoom(ctx, args.room, args.service);
      const occupants = await mucCall(() => ctx.muc().occupants(ref.room, ref.service));
      return occupants.map((occupant) => ({ jid: occupant.jid, nick: occupant.nick, role: occupant.role }));
    },
    get_room_occupants_number: async (args) => {
      const ref = await existingRoom(ctx, args.room, args.service);
      return (await mucCall(() => ctx.muc().occupants(ref.room, ref.service))).length;
    },
    get_room_history: async (args) => {
      const ref = await existingRoom(ctx, args.room, args.service);
      const history = await mucCall(() => ctx.muc().history(ref.room, ref.service));
      return history.map((entry) => ({ timestamp: timestamp(entry.timestamp), message: serialize(entry.message) }));
    },
    get_user_rooms: async (args) => mucCall(() => ctx.muc().userRooms(accountJid(args.user, args.host))),
  };
  const versioned = {
    'send_direct_invitation@v0': async (args: { name: string; service: string; password: string; reason: string; users: string }) => {
      await invite(
        args.name,
        args.service,
        args.password,
        args.reason,
        args.users.split(':').filter((jid) => jid !== ''),
        'name',
      );
    },
    'send_direct_invitation@v1': async (args: { room: string; service: string; password: string; reason: string; users: string[] }) => {
      await invite(args.room, args.service, args.password, args.reason, args.users, 'room');
    },
  };
  return { ...handlers, ...versioned } as unknown as HandlersFor<typeof occupantCommands>;
}
