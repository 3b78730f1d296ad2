/**
 * Rooms themselves: create_room, create_room_with_opts (two API versions: the separators of its list
 * options changed in 25.03), destroy_room, change_room_option, get_room_options. Each acts on the room's
 * live state through mod_muc (occupants see a destroy or an option change as XEP-0045 says) and on its
 * stored state (a persistent room keeps the change across a restart).
 */
import { defineCommand, type HandlersFor } from '@service/plugin-api';
import { RENAME_NAME, ROOM_ERRORS, room, service } from '../args.js';
import type { MucAdminContext } from '../context.js';
import { mucCall } from '../errors.js';
import { existingRoom, roomRef, servedHost } from '../lookup.js';
import { readCreationOptions, SEPARATORS_24_12, SEPARATORS_25_03, type Separators } from './creation.js';
import { OPTION_NAMES, optionName, optionText } from './option-text.js';

const roomHost = { name: 'host', type: 'string', desc: 'Server host: the virtual host the room belongs to', example: 'example.com' } as const;
/** A room's options as the commands carry them: name and text value pairs. */
const OPTION_LIST = {
    list: {
      object: [
        { name: 'name', type: 'string' },
        { name: 'value', type: 'string' },
      ],
    },
    item: 'option',
  } as const;
const optionsArg = {
  name: 'options',
  type: OPTION_LIST,
  desc: 'List of options',
  example: [
    { name: 'members_only', value: 'true' },
    { name: 'affiliations', value: 'owner=user1@localhost;member=user2@localhost' },
    { name: 'subscribers', value: 'user3@localhost=User3=messages=subject;user4@localhost=User4=messages' },
  ],
} as const;

const CREATE_ERRORS =
  'Fails with 409 when the room exists, with 400 when the service is not a MUC service of this server, the host is not a virtual host of this server or the room name is not a valid JID node.';
const OPTIONS_DOC =
  `Options are the room options get_room_options shows (${OPTION_NAMES.join(', ')}): booleans as \`true\`/\`false\`, numbers as digits, presence_broadcast as role names separated by commas. ` +
  "Two more set the room's lists: `affiliations`, and `subscribers` (MUC/Sub; nodes by full name, `urn:xmpp:mucsub:nodes:messages`, or short name, `messages`). " +
  'Every option is checked before the room is created: an unknown option, an option given twice or a bad value is a 400 naming it, and no room is created.';

export const roomCommands = [
  defineCommand({
    name: 'create_room',
    tags: ['muc_room'],
    desc: 'Create a MUC room name@service in host',
    longdesc: `Creates the room with the service's default room options, as if an account of \`host\` had created it, empty (no occupant). ${CREATE_ERRORS}`,
    args: [room, service, roomHost],
    argsRename: RENAME_NAME,
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { room: 'room1', service: 'conference.example.com', host: 'example.com' }, result: 0 }],
  }),
  defineCommand({
    name: 'create_room_with_opts',
    tags: ['muc_room', 'muc_sub'],
    desc: 'Create a MUC room name@service in host with given options',
    longdesc: `API versions 0 to 3 (up to ejabberd 24.12): in \`affiliations\` and \`subscribers\` tuples are separated by \`,\` and elements by \`:\`: \`owner:user1@localhost,member:user2@localhost\`, \`user3@localhost:User3:messages:subject\`. Otherwise as version 4. ${OPTIONS_DOC} ${CREATE_ERRORS}`,
    version: 0,
    args: [room, service, roomHost, optionsArg],
    argsRename: RENAME_NAME,
    result: { name: 'res', type: 'rescode' },
    examples: [
      {
        args: {
          room: 'room1',
          service: 'conference.example.com',
          host: 'example.com',
          options: [
            { name: 'members_only', value: 'true' },
            { name: 'affiliations', value: 'owner:user1@localhost,member:user2@localhost' },
          ],
        },
        result: 0,
      },
    ],
  }),
  defineCommand({
    name: 'create_room_with_opts',
    tags: ['muc_room', 'muc_sub'],
    desc: 'Create a MUC room name@service in host with given options',
    longdesc:
      'Option `affiliations` is like `Type1=JID1;Type2=JID2` (types: owner, admin, member, outcast) and option `subscribers` is like `JID1=Nick1=NodeA=NodeB;JID2=Nick2=NodeC`: ' +
      'tuples are separated by `;` and the elements of a tuple by `=` (until ejabberd 24.12, API version 3 and below, the separators were `,` and `:`). ' +
      `${OPTIONS_DOC} ${CREATE_ERRORS}`,
    note: 'modified in 25.03',
    version: 4,
    args: [room, service, roomHost, optionsArg],
    argsRename: RENAME_NAME,
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { room: 'room1', service: 'conference.example.com', host: 'example.com', options: optionsArg.example }, result: 0 }],
  }),
  defineCommand({
    name: 'destroy_room',
    tags: ['muc_room'],
    desc: 'Destroy a MUC room',
    longdesc: `Occupants get the destroy presence (XEP-0045 §10.9) and leave; the room, its affiliations, subscribers and history are removed from storage. ${ROOM_ERRORS}`,
    args: [room, service],
    argsRename: RENAME_NAME,
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { room: 'room1', service: 'conference.example.com' }, result: 0 }],
  }),
  defineCommand({
    name: 'change_room_option',
    tags: ['muc_room'],
    desc: 'Change an option in a MUC room',
    longdesc:
      `Sets one option of the running room (occupants get the configuration change notice, XEP-0045 §10.2.1) and of its stored state. Options and values as for create_room_with_opts (${OPTION_NAMES.join(', ')}). ` +
      `Fails with 400 naming the option when it is unknown, or the value when it is not one the option takes; nothing changes then. ${ROOM_ERRORS}`,
    args: [room, service, { name: 'option', type: 'string', desc: 'Option name', example: 'members_only' }, { name: 'value', type: 'string', desc: 'Value to assign', example: 'true' }],
    argsRename: RENAME_NAME,
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { room: 'room1', service: 'conference.example.com', option: 'members_only', value: 'true' }, result: 0 }],
  }),
  defineCommand({
    name: 'get_room_options',
    tags: ['muc_room'],
    desc: 'Get options from a MUC room',
    longdesc: `Every room option with its value as text: booleans as \`true\`/\`false\`, presence_broadcast as role names separated by commas. ${ROOM_ERRORS}`,
    args: [room, service],
    argsRename: RENAME_NAME,
    result: {
      name: 'options',
      type: OPTION_LIST,
      desc: 'List of room options name and value',
    },
    examples: [
      {
        args: { room: 'room1', service: 'conference.example.com' },
        result: [
          { name: 'members_only', value: 'true' },
          { name: 'persistent', value: 'true' },
        ],
      },
    ],
  }),
] as const;

export function roomHandlers(ctx: MucAdminContext): HandlersFor<typeof roomCommands> {
  type CreateArgs = { room: string; service: string; host: string; options: Array<{ name: string; value: string }> };
  const createWithOptions = (separators: Separators) => async (args: CreateArgs) => {
    const ref = roomRef(ctx, args.room, args.service);
    const host = servedHost(ctx, args.host);
    const creation = readCreationOptions(args.options, separators);
    await mucCall(() => ctx.muc().createRoom(ref.room, ref.service, { ...creation, host }), 'options');
  };
  const handlers: Omit<HandlersFor<typeof roomCommands>, 'create_room_with_opts'> = {
    create_room: async (args) => {
      const ref = roomRef(ctx, args.room, args.service);
      const host = servedHost(ctx, args.host);
      await mucCall(() => ctx.muc().createRoom(ref.room, ref.service, { host }));
    },
    destroy_room: async (args) => {
      const ref = await existingRoom(ctx, args.room, args.service);
      await mucCall(() => ctx.muc().destroyRoom(ref.room, ref.service));
    },
    change_room_option: async (args) => {
      const ref = await existingRoom(ctx, args.room, args.service);
      const name = optionName(args.option, 'option');
      await mucCall(() => ctx.muc().setOption(ref.room, ref.service, name, args.value), 'value');
    },
    get_room_options: async (args) => {
      const ref = await existingRoom(ctx, args.room, args.service);
      const options = await mucCall(() => ctx.muc().options(ref.room, ref.service));
      return OPTION_NAMES.filter((name) => options[name] !== undefined).map((name) => ({ name, value: optionText(options[name]) }));
    },
  };
  // create_room_with_opts has one handler per API version (the separators differ); both are typed here.
  const versioned = {
    'create_room_with_opts@v0': createWithOptions(SEPARATORS_24_12),
    'create_room_with_opts@v4': createWithOptions(SEPARATORS_25_03),
  };
  return { ...handlers, ...versioned } as unknown as HandlersFor<typeof roomCommands>;
}
