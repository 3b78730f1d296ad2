/**
 * Rooms in bulk from a file (format in room-file.ts): create_rooms_file creates every listed room,
 * persistent (so it is there after a restart too), and destroy_rooms_file destroys every listed room.
 * Both check the whole file first: a bad line, or a room that exists already (create) or does not
 * (destroy), fails the command naming the line, and nothing is created or destroyed.
 */
import { conflict, defineCommand, notFound, type HandlersFor } from '@service/plugin-api';
import type { MucAdminContext } from '../context.js';
import { mucCall } from '../errors.js';
import { readRoomFile } from './room-file.js';

const file = { name: 'file', type: 'string', desc: 'Path to a text file with one room JID per line (absolute, or relative to data_dir)', example: '/home/service/rooms.txt' } as const;
const FILE_DOC = 'The file has one room JID (room@service) per line; empty lines and lines starting with `#` are skipped. ';

export const fileCommands = [
  defineCommand({
    name: 'create_rooms_file',
    tags: ['muc'],
    desc: 'Create the rooms indicated in file',
    longdesc:
      `${FILE_DOC}Each room is created with its service's default options, persistent: it stays after a restart of the server, with nobody in it. ` +
      'Fails, creating nothing, with 404 when the file does not exist, with 400 naming the line when a line is not the JID of a room of a MUC service of this server or lists a room twice, ' +
      'with 409 naming the line when that room exists already.',
    note: 'improved in 24.12',
    args: [file],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { file: '/home/service/rooms.txt' }, result: 0 }],
  }),
  defineCommand({
    name: 'destroy_rooms_file',
    tags: ['muc'],
    desc: 'Destroy the rooms indicated in file',
    longdesc:
      `${FILE_DOC}Each room is destroyed as destroy_room does (occupants get the destroy presence, stored state goes). ` +
      'Fails, destroying nothing, with 404 when the file does not exist or naming the line of a room that does not exist, with 400 naming the line when a line is not the JID of a room of a MUC service of this server or lists a room twice.',
    args: [file],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { file: '/home/service/rooms.txt' }, result: 0 }],
  }),
] as const;

export function fileHandlers(ctx: MucAdminContext): HandlersFor<typeof fileCommands> {
  /** The virtual host a service belongs to (conference.example.com → example.com), when it is one this server serves. */
  const hostOf = (service: string): string | undefined => ctx.services.config().hosts.find((host) => service.endsWith(`.${host.toLowerCase()}`));
  return {
    create_rooms_file: async (args) => {
      const { file: path, rooms } = await readRoomFile(ctx, args.file);
      for (const room of rooms) {
        if (await mucCall(() => ctx.muc().room(room.room, room.service))) throw conflict(`${path} line ${room.line}: room ${room.jid} exists already`);
      }
      for (const room of rooms) {
        const host = hostOf(room.service);
        await mucCall(() => ctx.muc().createRoom(room.room, room.service, { ...(host ? { host } : {}), options: { persistent: true } }), 'file');
      }
    },
    destroy_rooms_file: async (args) => {
      const { file: path, rooms } = await readRoomFile(ctx, args.file);
      for (const room of rooms) {
        if (!(await mucCall(() => ctx.muc().room(room.room, room.service)))) throw notFound(`${path} line ${room.line}: room ${room.jid} does not exist`);
      }
      for (const room of rooms) await mucCall(() => ctx.muc().destroyRoom(room.room, room.service));
    },
  };
}
