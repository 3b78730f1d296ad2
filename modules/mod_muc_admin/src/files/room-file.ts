/**
 * The room file of create_rooms_file and destroy_rooms_file: one room JID (room@service) per line; empty
 * lines and lines starting with `#` are skipped. The whole file is read and checked before anything
 * changes, and a bad line is named with its number.
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { badArgument, Jid, notFound } from '@service/plugin-api';
import type { MucAdminContext } from '../context.js';
import { roomRef, type RoomRef } from '../lookup.js';

const MAX_FILE_BYTES = 16 * 1024 * 1024;

export interface RoomLine extends RoomRef {
  readonly line: number;
}

/** The rooms a file lists, each checked (a JID of a room of a MUC service of this server), in file order. */
export async function readRoomFile(ctx: MucAdminContext, path: string): Promise<{ file: string; rooms: RoomLine[] }> {
  if (!path) throw badArgument('file', 'file must be a path (absolute, or relative to data_dir)');
  const file = isAbsolute(path) ? path : resolve(ctx.services.config().dataDir, path);
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw notFound(`the room file ${file} does not exist`);
    throw badArgument('file', `cannot read the room file ${file}: ${code ?? (err as Error).message}`);
  }
  if (bytes.length > MAX_FILE_BYTES) throw badArgument('file', `the room file ${file} is larger than ${MAX_FILE_BYTES} bytes`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw badArgument('file', `the room file ${file} is not UTF-8 text`);
  }
  const rooms: RoomLine[] = [];
  const seen = new Map<string, number>();
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const number = index + 1;
    const ref = roomOnLine(ctx, line);
    if (typeof ref === 'string') throw badArgument('file', `${file} line ${number}: ${ref}`);
    const earlier = seen.get(ref.jid);
    if (earlier !== undefined) throw badArgument('file', `${file} line ${number}: ${ref.jid} is listed already on line ${earlier}`);
    seen.set(ref.jid, number);
    rooms.push({ ...ref, line: number });
  }
  return { file, rooms };
}

/**
 * The room a line names, or what is wrong with it. The line's own text is never quoted back (the file may
 * be any file the server can read): only the problem, and the services this server runs.
 */
function roomOnLine(ctx: MucAdminContext, line: string): RoomRef | string {
  const jid = Jid.tryParse(line);
  if (!jid) return 'not a valid JID: each line must be the JID of a room (room@service)';
  if (jid.user === undefined || jid.resource !== undefined) return 'not the JID of a room: each line must be room@service, without a resource';
  if (!ctx.muc().isService(jid.host)) return `the JID's service is not a MUC service of this server (it runs ${ctx.muc().services().join(', ')})`;
  return roomRef(ctx, jid.user, jid.host);
}
