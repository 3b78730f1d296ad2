/**
 * The room's own vCard (vcard-temp, XEP-0054, on the room's bare JID), as ejabberd keeps one: anyone may
 * read it, only owners may set it, and a persistent room keeps it in storage across restarts. Its photo's
 * hash (XEP-0153, vcard-temp:x:update) goes out in a presence from the room's bare JID to each joining
 * occupant, and to every occupant when an owner changes the photo, so that clients can show the room's
 * avatar. A persistent room's vCard is read from storage the first time the room needs it.
 */
import { createHash } from 'node:crypto';
import { StanzaError, fromStoredXml, toStoredXml, x, type Jid, type XmlElement } from '@service/plugin-api';
import { actorOf } from './admin-iq.js';
import type { MucEnv } from './context.js';
import type { Room } from './room.js';

export const NS_VCARD = 'vcard-temp';
export const NS_VCARD_UPDATE = 'vcard-temp:x:update';

/**
 * The largest vCard a room keeps, serialized (a photo is base64 inside it): half of a client stream's
 * default max_stanza_size, so that every occupant's server can carry it.
 */
export const MAX_VCARD_CHARS = 128 * 1024;

/** iq get vCard to the room: its vCard, or item-not-found when it has none (as ejabberd answers). */
export async function vcardGet(env: MucEnv, room: Room): Promise<XmlElement> {
  await loadVcard(env, room);
  if (!room.vcard) throw new StanzaError('item-not-found', 'this room has no vCard');
  return fromStoredXml(room.vcard.xml);
}

/** iq set vCard to the room: an owner replaces it (an empty <vCard/> removes it). */
export async function vcardSet(env: MucEnv, room: Room, from: Jid, vcard: XmlElement): Promise<void> {
  if (actorOf(env, room, from).affiliation !== 'owner') throw new StanzaError('forbidden', "only the room's owners set its vCard");
  const xml = toStoredXml(vcard);
  if (xml.length > MAX_VCARD_CHARS) throw new StanzaError('not-acceptable', `the vCard is larger than ${MAX_VCARD_CHARS} characters`);
  await loadVcard(env, room);
  const before = room.vcard?.photoHash ?? '';
  const empty = vcard.elements().length === 0;
  room.vcard = empty ? null : { xml, photoHash: photoHash(vcard) };
  if (room.options.persistent) {
    if (room.vcard) await env.store.setRoomVcard(room.service, room.name, room.vcard.xml);
    else await env.store.removeRoomVcard(room.service, room.name);
  }
  const after = room.vcard?.photoHash ?? '';
  if (after === before) return;
  for (const occupant of room.occupants.values()) {
    for (const session of occupant.sessions.values()) await env.send(avatarPresence(room, session.jid.full, after));
  }
}

/** To a joining session: the room's avatar hash, when the room has a photo. Never fails the join. */
export async function sendRoomAvatar(env: MucEnv, room: Room, full: string): Promise<void> {
  try {
    await loadVcard(env, room);
  } catch (err) {
    env.logger.warn({ err, room: room.jid.bare }, "could not read a persistent room's vCard");
    return;
  }
  if (room.vcard?.photoHash) await env.send(avatarPresence(room, full, room.vcard.photoHash));
}

/** Reads a persistent room's vCard from storage once; a temporary room's lives only in memory. */
export async function loadVcard(env: MucEnv, room: Room): Promise<void> {
  if (room.vcard !== undefined) return;
  if (!room.options.persistent) {
    room.vcard = null;
    return;
  }
  const xml = await env.store.roomVcard(room.service, room.name);
  if (xml === undefined) {
    room.vcard = null;
    return;
  }
  try {
    room.vcard = { xml, photoHash: photoHash(fromStoredXml(xml)) };
  } catch {
    // A stored vCard that no longer parses is as good as none; the owner can set it again.
    room.vcard = null;
  }
}

/** XEP-0153: the SHA-1 (hex) of the photo's bytes; '' when the vCard has no photo. */
export function photoHash(vcard: XmlElement): string {
  const binval = vcard.getChild('PHOTO')?.getChildText('BINVAL')?.replace(/\s+/g, '');
  if (!binval) return '';
  return createHash('sha1').update(Buffer.from(binval, 'base64')).digest('hex');
}

function avatarPresence(room: Room, to: string, hash: string): XmlElement {
  return x('presence', { from: room.jid.bare, to }, x('x', { xmlns: NS_VCARD_UPDATE }, x('photo', {}, hash)));
}
