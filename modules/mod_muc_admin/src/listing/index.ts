/**
 * Rooms across services: muc_online_rooms, muc_online_rooms_by_regex, and the clean-up commands
 * rooms_empty_list / rooms_empty_destroy (rooms without any message in their history or archive) and
 * rooms_unused_list / rooms_unused_destroy (rooms nobody is in and nobody wrote to for some days). Each
 * takes one MUC service or `global` for all of them.
 */
import { badArgument, defineCommand, type HandlersFor } from '@service/plugin-api';
import type { RoomSummary } from '@service/mod_muc/api';
import { days, globalService } from '../args.js';
import type { MucAdminContext } from '../context.js';
import { mucCall } from '../errors.js';
import { servicesOf } from '../lookup.js';

const DAY_MS = 86_400_000;
const SERVICE_ERRORS = 'Fails with 400 when the service is neither `global` nor a MUC service of this server.';
const EMPTY_DOC = 'A room is empty when it holds no message: nothing in its history nor in its archive (whoever is joined).';
const UNUSED_DOC = 'A room is unused when nobody is joined and it received no message for at least `days` days (a room that never received one counts from its creation).';
const roomList = { name: 'rooms', type: { list: 'string', item: 'room' }, desc: 'List of rooms (room@service)' } as const;

export const listingCommands = [
  defineCommand({
    name: 'muc_online_rooms',
    tags: ['muc'],
    desc: 'List existing rooms',
    longdesc: `The rooms of the service, or of every MUC service with \`global\`, as room@service. ${SERVICE_ERRORS}`,
    args: [globalService],
    result: roomList,
    examples: [{ args: { service: 'conference.example.com' }, result: ['room1@conference.example.com', 'room2@conference.example.com'] }],
  }),
  defineCommand({
    name: 'muc_online_rooms_by_regex',
    tags: ['muc'],
    desc: 'List existing rooms filtered by regexp',
    longdesc: `The rooms of the service (or every one, with \`global\`) whose name matches the regular expression (JavaScript syntax, unanchored), with whether they are public and how many occupants they have. Fails with 400 when the regex is not one. ${SERVICE_ERRORS}`,
    args: [globalService, { name: 'regex', type: 'string', desc: 'Regex pattern for room name', example: '^prefix' }],
    result: {
      name: 'rooms',
      type: {
        list: {
          object: [
            { name: 'jid', type: 'string' },
            { name: 'public', type: 'string' },
            { name: 'participants', type: 'integer' },
          ],
        },
        item: 'room',
      },
      desc: 'List of rooms with summary',
    },
    examples: [{ args: { service: 'conference.example.com', regex: '^prefix' }, result: [{ jid: 'room1@conference.example.com', public: 'true', participants: 10 }] }],
  }),
  defineCommand({
    name: 'rooms_empty_list',
    tags: ['muc'],
    desc: 'List the rooms that have no messages in archive',
    longdesc: `${EMPTY_DOC} ${SERVICE_ERRORS}`,
    args: [globalService],
    result: roomList,
    examples: [{ args: { service: 'conference.example.com' }, result: ['room1@conference.example.com', 'room2@conference.example.com'] }],
  }),
  defineCommand({
    name: 'rooms_empty_destroy',
    tags: ['muc'],
    desc: 'Destroy the rooms that have no messages in archive',
    longdesc: `API versions 0 and 1: answers the list of destroyed rooms. ${EMPTY_DOC} Occupants get the destroy presence. ${SERVICE_ERRORS}`,
    version: 0,
    args: [globalService],
    result: { ...roomList, desc: 'List of empty rooms that have been destroyed' },
    examples: [{ args: { service: 'conference.example.com' }, result: ['room1@conference.example.com', 'room2@conference.example.com'] }],
  }),
  defineCommand({
    name: 'rooms_empty_destroy',
    tags: ['muc', 'v2'],
    desc: 'Destroy the rooms that have no messages in archive',
    longdesc: `${EMPTY_DOC} Each is destroyed as destroy_room does (occupants get the destroy presence); answers how many. ${SERVICE_ERRORS}`,
    note: 'modified in 24.06',
    version: 2,
    args: [globalService],
    result: { name: 'res', type: 'restuple', desc: 'How many empty rooms were destroyed' },
    examples: [{ args: { service: 'conference.example.com' }, result: 'Destroyed rooms: 2' }],
  }),
  defineCommand({
    name: 'rooms_unused_list',
    tags: ['muc'],
    desc: 'List the rooms that are unused for many days in the service',
    longdesc: `${UNUSED_DOC} Fails with 400 when days is negative. ${SERVICE_ERRORS}`,
    args: [globalService, days],
    result: roomList,
    examples: [{ args: { service: 'conference.example.com', days: 31 }, result: ['room1@conference.example.com', 'room2@conference.example.com'] }],
  }),
  defineCommand({
    name: 'rooms_unused_destroy',
    tags: ['muc'],
    desc: 'Destroy the rooms that are unused for many days in the service',
    longdesc: `${UNUSED_DOC} Each is destroyed as destroy_room does; answers the rooms destroyed. Fails with 400 when days is negative. ${SERVICE_ERRORS}`,
    note: 'uses recent room history',
    args: [globalService, days],
    result: { ...roomList, desc: 'List of unused rooms that have been destroyed' },
    examples: [{ args: { service: 'conference.example.com', days: 31 }, result: ['room1@conference.example.com', 'room2@conference.example.com'] }],
  }),
] as const;

export function listingHandlers(ctx: MucAdminContext): HandlersFor<typeof listingCommands> {
  const roomsOf = async (serviceText: string): Promise<RoomSummary[]> => {
    const services = servicesOf(ctx, serviceText);
    const lists = await Promise.all(services.map((name) => mucCall(() => ctx.muc().rooms(name))));
    return lists.flat().sort((a, b) => a.jid.localeCompare(b.jid));
  };
  const empty = async (serviceText: string) => (await roomsOf(serviceText)).filter((room) => room.historySize === 0);
  const unused = async (serviceText: string, numberOfDays: number) => {
    if (numberOfDays < 0) throw badArgument('days', `days must be 0 or more, got ${numberOfDays}`);
    const before = Date.now() - numberOfDays * DAY_MS;
    return (await roomsOf(serviceText)).filter((room) => room.occupants === 0 && room.lastActivity <= before);
  };
  const destroy = async (rooms: readonly RoomSummary[]): Promise<string[]> => {
    const destroyed: string[] = [];
    for (const room of rooms) {
      await mucCall(() => ctx.muc().destroyRoom(room.room, room.service));
      destroyed.push(room.jid);
    }
    return destroyed;
  };
  const handlers: Omit<HandlersFor<typeof listingCommands>, 'rooms_empty_destroy'> = {
    muc_online_rooms: async (args) => (await roomsOf(args.service)).map((room) => room.jid),
    muc_online_rooms_by_regex: async (args) => {
      let pattern: RegExp;
      try {
        pattern = new RegExp(args.regex, 'u');
      } catch (err) {
        throw badArgument('regex', `regex: '${args.regex}' is not a valid regular expression: ${(err as Error).message}`);
      }
      return (await roomsOf(args.service)).filter((room) => pattern.test(room.room)).map((room) => ({ jid: room.jid, public: String(room.public), participants: room.occupants }));
    },
    rooms_empty_list: async (args) => (await empty(args.service)).map((room) => room.jid),
    rooms_unused_list: async (args) => (await unused(args.service, args.days)).map((room) => room.jid),
    rooms_unused_destroy: async (args) => destroy(await unused(args.service, args.days)),
  };
  const versioned = {
    'rooms_empty_destroy@v0': async (args: { service: string }) => destroy(await empty(args.service)),
    'rooms_empty_destroy@v2': async (args: { service: string }) => `Destroyed rooms: ${(await destroy(await empty(args.service))).length}`,
  };
  return { ...handlers, ...versioned } as unknown as HandlersFor<typeof listingCommands>;
}
