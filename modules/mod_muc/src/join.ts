/**
 * Presence to room@service/nick (XEP-0045 §7.2-§7.7, §7.14): entering (with the checks in the XEP's
 * order: lock, ban, members-only, password, nick conflict, capacity), further sessions of the same
 * account under its nick, presence updates, nick changes (303) and leaving. The nick is the one the
 * service enforces (nick.ts); when that differs from what the user asked, its own presence says 210.
 * Room creation on a first join (201, locked until configured) is asked of the caller, which owns the
 * registry of rooms.
 */
import { StanzaError, x, type Jid, type XmlElement } from '@service/plugin-api';
import { broadcastPresence, seesJids, shownAffiliation } from './broadcast.js';
import type { MucEnv } from './context.js';
import { historyRequestOf } from './history.js';
import { enforceNick, requestedNick } from './nick.js';
import { NS_MUC } from './ns.js';
import type { Occupant } from './occupants.js';
import { occupantPresence } from './presence.js';
import type { Room } from './room.js';
import { sendRoomAvatar } from './vcard.js';

export interface JoinPorts {
  /** A new room for this join, owned by the joiner, locked; undefined when the joiner may not create rooms. */
  createRoom(): Room | undefined;
  /** How many rooms the account is an occupant of now. */
  conferencesOf(bare: string): number;
  /** The account holding a registered nick on the service, if any. */
  nickOwner(nick: string): Promise<string | undefined>;
}

/** Handles a presence to an occupant JID; resolves with the room after it (undefined when none exists). */
export async function handleOccupantPresence(env: MucEnv, room: Room | undefined, stanza: XmlElement, from: Jid, routedNick: string, ports: JoinPorts): Promise<Room | undefined> {
  const type = stanza.attr('type');
  if (type === 'unavailable') {
    if (room) await leave(env, room, from, stanza);
    return room;
  }
  if (type !== undefined) return room;
  // §7.2.9: the service enforces the nick (nick.ts); when that changes what the user asked, it says 210.
  const asked = requestedNick(stanza.attr('to')) ?? routedNick;
  const nick = enforceNick(asked);
  if (nick === undefined) {
    await env.bounce(stanza, new StanzaError('jid-malformed', `'${asked}' is not a valid nickname`));
    return room;
  }
  const modified = nick !== asked;
  const occupant = room?.occupantBySession(from.full);
  if (room && occupant) {
    if (occupant.nick === nick) await updatePresence(env, room, occupant, from, stanza);
    else await changeNick(env, room, occupant, from, nick, modified, stanza, ports);
    return room;
  }
  return join(env, room, stanza, from, nick, modified, ports);
}

async function join(env: MucEnv, existing: Room | undefined, stanza: XmlElement, from: Jid, nick: string, modified: boolean, ports: JoinPorts): Promise<Room | undefined> {
  const bare = from.bare;
  let room = existing;
  let created = false;
  if (!room) {
    room = ports.createRoom();
    if (!room) {
      await env.bounce(stanza, new StanzaError('not-allowed', 'you may not create rooms on this service'));
      return undefined;
    }
    created = true;
  }
  const admin = env.isServiceAdmin(bare, room.host);
  const affiliation = admin ? 'owner' : room.affiliationOf(bare);
  const muc = stanza.getChild('x', NS_MUC);
  const refuse = async (error: StanzaError) => {
    await env.bounce(stanza, error);
    return room;
  };
  if (room.locked && affiliation !== 'owner') return refuse(new StanzaError('item-not-found', 'the room is locked until its owner configures it'));
  if (affiliation === 'outcast') return refuse(new StanzaError('forbidden', 'you are banned from this room'));
  if (room.options.members_only && !admin && !room.mayEnterMembersOnly(bare, affiliation)) {
    return refuse(new StanzaError('registration-required', 'this room is members-only'));
  }
  if (room.options.password_protected && !admin && affiliation !== 'owner' && muc?.getChildText('password') !== room.options.password) {
    return refuse(new StanzaError('not-authorized', 'a password is required to enter this room'));
  }
  const holder = room.occupantByNick(nick);
  if (holder && holder.bare !== bare) return refuse(new StanzaError('conflict', 'that nickname is in use in this room'));
  const registered = await ports.nickOwner(nick);
  if (registered !== undefined && registered !== bare) return refuse(new StanzaError('conflict', 'that nickname is registered by another person'));
  if (!holder) {
    const limit = Math.min(room.options.max_users, env.settings.maxUsers);
    if (room.occupants.size >= limit && affiliation !== 'owner' && affiliation !== 'admin') {
      return refuse(new StanzaError('service-unavailable', 'the room is full'));
    }
    if (ports.conferencesOf(bare) >= env.settings.maxUserConferences && !admin) {
      return refuse(new StanzaError('resource-constraint', 'you are in too many rooms already'));
    }
  }
  const role = holder?.role ?? room.roleOnEntry(bare, affiliation, admin);
  if (role === 'none') return refuse(new StanzaError('registration-required', 'this room is members-only'));

  const occupant: Occupant = holder ?? { nick, bare, role, sessions: new Map() };
  occupant.sessions.set(from.full, { jid: from, presence: visiblePresence(room, role, stanza) });
  // A further session of the account joins the occupant under its nick, whatever case it asked in.
  room.occupants.set(occupant.nick, occupant);
  room.lastActivity = env.now();

  // §7.2.3: the others' presence first, then its own (to everyone), then history, then the subject. The
  // room's own presence (its avatar's hash, XEP-0153) comes before them all, as ejabberd sends it.
  await sendRoomAvatar(env, room, from.full);
  for (const other of room.occupants.values()) {
    if (other === occupant) continue;
    if (!room.options.presence_broadcast.some((r) => r === other.role)) continue;
    await env.send(occupantPresence(room.jid.bare, other, undefined, shownAffiliation(env, room, other.bare), { full: from.full, self: false, seesJids: seesJids(env, room, occupant) }, {}));
  }
  const selfCodes: number[] = [];
  if (!room.options.anonymous) selfCodes.push(100);
  if (room.options.logging) selfCodes.push(170);
  if (created) selfCodes.push(201);
  if (modified || occupant.nick !== nick) selfCodes.push(210);
  await broadcastPresence(env, room, occupant, { selfCodes }, from.full);
  for (const message of room.history.select(historyRequestOf(muc?.getChild('history')), env.now())) {
    message.setAttr('to', from.full);
    await env.send(message);
  }
  await env.send(x('message', { from: room.subjectNick ? `${room.jid.bare}/${room.subjectNick}` : room.jid.bare, to: from.full, type: 'groupchat' }, x('subject', {}, room.subject)));
  return room;
}

async function updatePresence(env: MucEnv, room: Room, occupant: Occupant, from: Jid, stanza: XmlElement): Promise<void> {
  const session = occupant.sessions.get(from.full);
  if (!session) return;
  session.presence = visiblePresence(room, occupant.role, stanza);
  await broadcastPresence(env, room, occupant, {}, from.full);
}

async function changeNick(env: MucEnv, room: Room, occupant: Occupant, from: Jid, nick: string, modified: boolean, stanza: XmlElement, ports: JoinPorts): Promise<void> {
  if (occupant.role === 'visitor' && !room.options.allow_visitor_nickchange) {
    await env.bounce(stanza, new StanzaError('not-acceptable', 'visitors may not change their nickname in this room'));
    return;
  }
  const holder = room.occupantByNick(nick);
  if (holder && holder !== occupant) {
    await env.bounce(stanza, new StanzaError('conflict', 'that nickname is in use in this room'));
    return;
  }
  const registered = await ports.nickOwner(nick);
  if (registered !== undefined && registered !== occupant.bare) {
    await env.bounce(stanza, new StanzaError('conflict', 'that nickname is registered by another person'));
    return;
  }
  // §7.6: unavailable from the old nick with 303 and the new nick, then available from the new one.
  await broadcastPresence(env, room, occupant, { unavailable: true, codes: [303], newNick: nick, role: occupant.role }, from.full);
  room.occupants.delete(occupant.nick);
  occupant.nick = nick;
  room.occupants.set(nick, occupant);
  const session = occupant.sessions.get(from.full);
  if (session) session.presence = visiblePresence(room, occupant.role, stanza);
  await broadcastPresence(env, room, occupant, { selfCodes: modified ? [210] : [] }, from.full);
}

async function leave(env: MucEnv, room: Room, from: Jid, stanza: XmlElement): Promise<void> {
  const occupant = room.occupantBySession(from.full);
  if (!occupant) return;
  const session = occupant.sessions.get(from.full)!;
  session.presence = stanza;
  if (occupant.sessions.size > 1) {
    // Another session keeps the nick: only this one is told it left.
    await env.send(occupantPresence(room.jid.bare, occupant, from.full, shownAffiliation(env, room, occupant.bare), { full: from.full, self: true, seesJids: true }, { unavailable: true }));
    occupant.sessions.delete(from.full);
    return;
  }
  room.occupants.delete(occupant.nick);
  await broadcastPresence(env, room, occupant, { unavailable: true, role: 'none' }, from.full);
}

/** A visitor's status text is dropped when the room does not allow it (allow_visitor_status). */
function visiblePresence(room: Room, role: string, stanza: XmlElement): XmlElement {
  if (role !== 'visitor' || room.options.allow_visitor_status) return stanza;
  const copy = stanza.clone();
  copy.removeChildren((c) => c.local === 'status');
  return copy;
}
