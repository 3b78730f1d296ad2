/**
 * The services, rooms and JIDs commands name, checked before anything changes, the same way in every
 * area: a service that is not one of mod_muc's, a room name that cannot be a JID node or a JID that is not
 * one is a 400 naming the argument; a room that does not exist is a 404 naming it.
 */
import { InvalidJid, Jid, badArgument, nameprep, nodeprep, notFound, resourceprep } from '@service/plugin-api';
import type { RoomSummary } from '@service/mod_muc/api';
import type { MucAdminContext } from './context.js';
import { mucCall } from './errors.js';

/** The word that stands for every MUC service (muc_online_rooms, rooms_empty_*, rooms_unused_*). */
export const GLOBAL = 'global';

/** A MUC service this server runs, normalized. */
export function mucServiceName(ctx: MucAdminContext, text: string, argument = 'service'): string {
  let name: string;
  try {
    name = nameprep(text);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(argument, `${argument}: '${text}' is not a domain: ${err.message}`);
    throw err;
  }
  const muc = ctx.muc();
  if (!muc.isService(name)) {
    const services = muc.services();
    throw badArgument(argument, `'${text}' is not a MUC service of this server (${services.length ? `it runs ${services.join(', ')}` : 'it runs none'})`);
  }
  return name;
}

/** The services a `service` argument that may be `global` names. */
export function servicesOf(ctx: MucAdminContext, text: string, argument = 'service'): string[] {
  if (text === GLOBAL) return ctx.muc().services();
  return [mucServiceName(ctx, text, argument)];
}

/** A room name, normalized (nodeprep). */
export function roomName(text: string, argument = 'room'): string {
  if (text === '') throw badArgument(argument, `${argument} must be a room name, got an empty text`);
  try {
    return nodeprep(text);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(argument, `${argument}: '${text}' is not a valid room name: ${err.message}`);
    throw err;
  }
}

export interface RoomRef {
  readonly room: string;
  readonly service: string;
  /** room@service */
  readonly jid: string;
}

/** A room name and a service, checked; the room need not exist. */
export function roomRef(ctx: MucAdminContext, room: string, service: string, names: { room: string; service: string } = { room: 'room', service: 'service' }): RoomRef {
  const name = roomName(room, names.room);
  const host = mucServiceName(ctx, service, names.service);
  return { room: name, service: host, jid: `${name}@${host}` };
}

/** A room that exists, with its summary; 404 when it does not. */
export async function existingRoom(ctx: MucAdminContext, room: string, service: string, names?: { room: string; service: string }): Promise<RoomRef & { summary: RoomSummary }> {
  const ref = roomRef(ctx, room, service, names);
  const summary = await mucCall(() => ctx.muc().room(ref.room, ref.service));
  if (!summary) throw notFound(`room ${ref.jid} does not exist`);
  return { ...ref, summary };
}

/** A room given as one JID (room@service), checked; the room need not exist. */
export function roomFromJid(ctx: MucAdminContext, text: string, argument: string): RoomRef {
  const jid = jidArg(argument, text);
  if (jid.user === undefined || jid.resource !== undefined) throw badArgument(argument, `'${text}' is not a room JID: it must be room@service, without a resource`);
  return roomRef(ctx, jid.user, jid.host, { room: argument, service: argument });
}

/** A JID argument, normalized. */
export function jidArg(argument: string, text: string): Jid {
  try {
    return Jid.parse(text);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(argument, `${argument}: '${text}' is not a valid JID: ${err.message}`);
    throw err;
  }
}

/** The bare JID of `user`@`host` (any server: rooms may hold users of other servers). */
export function accountJid(user: string, host: string, names: { user: string; host: string } = { user: 'user', host: 'host' }): string {
  let node: string;
  let domain: string;
  try {
    node = nodeprep(user);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(names.user, `${names.user}: '${user}' is not a valid user name: ${err.message}`);
    throw err;
  }
  if (node === '') throw badArgument(names.user, `${names.user} must be a user name, got an empty text`);
  try {
    domain = nameprep(host);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(names.host, `${names.host}: '${host}' is not a valid server name: ${err.message}`);
    throw err;
  }
  if (domain === '') throw badArgument(names.host, `${names.host} must be a server name, got an empty text`);
  return `${node}@${domain}`;
}

/** A bare JID argument (an account, or a server for a server-wide affiliation). */
export function bareJidArg(argument: string, text: string): string {
  const jid = jidArg(argument, text);
  if (jid.resource !== undefined) throw badArgument(argument, `${argument} must be a bare JID (without a resource), got '${text}'`);
  return jid.bare;
}

/** A virtual host this server serves, normalized (create_room's `host`: who may create and administer the room). */
export function servedHost(ctx: MucAdminContext, text: string, argument = 'host'): string {
  let name: string;
  try {
    name = nameprep(text);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(argument, `${argument}: '${text}' is not a valid server name: ${err.message}`);
    throw err;
  }
  const hosts = ctx.services.config().hosts;
  if (!hosts.some((served) => served.toLowerCase() === name)) throw badArgument(argument, `unknown virtual host '${text}': this server serves ${hosts.join(', ')}`);
  return name;
}

/** A nick in a room (an occupant JID's resource), checked: 400 naming the argument when it cannot be one. */
export function nickArg(text: string, argument = 'nick'): string {
  if (text.trim() === '') throw badArgument(argument, `${argument} must be a nick, got an empty text`);
  try {
    return resourceprep(text);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(argument, `${argument}: '${text}' is not a valid nick: ${err.message}`);
    throw err;
  }
}
