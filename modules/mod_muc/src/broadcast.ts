/**
 * Telling the room: an occupant's presence to every occupant (as each may see it, within
 * presence_broadcast), groupchat messages to every occupant session (kept in history), and the same
 * events to MUC/Sub subscribers that are not joined.
 */
import { x, type XmlElement } from '@service/plugin-api';
import { archiveOf } from './archive.js';
import type { MucEnv } from './context.js';
import { NODE, sendEvent } from './mucsub.js';
import { NS_MUC_USER, NS_SID } from './ns.js';
import type { Occupant } from './occupants.js';
import { occupantPresence, type PresenceNotice } from './presence.js';
import type { Room } from './room.js';
import type { Affiliation } from './types.js';

/** The affiliation an occupant shows: a service administrator is an owner of every room. */
export function shownAffiliation(env: MucEnv, room: Room, bare: string): Affiliation {
  return env.isServiceAdmin(bare, room.host) ? 'owner' : room.affiliationOf(bare);
}

export function seesJids(env: MucEnv, room: Room, receiver: Occupant): boolean {
  return !room.options.anonymous || receiver.role === 'moderator';
}

/**
 * An occupant's presence to the room. Its own sessions always hear it (with 110); the others only when
 * its role (before a removal: the role it had) is in presence_broadcast. A role change across
 * presence_broadcast (notice.formerRole), or a change of presence_broadcast itself (notice.wasShown),
 * shows the others the occupant arriving (voice granted to a hidden visitor) or leaving (its role is now
 * hidden: unavailable with role none, as ejabberd does for a role change).
 */
export async function broadcastPresence(env: MucEnv, room: Room, occupant: Occupant, notice: PresenceNotice, sessionFull?: string): Promise<void> {
  const affiliation = shownAffiliation(env, room, occupant.bare);
  const shown = (role: string) => room.options.presence_broadcast.some((r) => r === role);
  // A leaving occupant keeps its role until told: others hear of it when they heard of its arrival.
  const now = shown(occupant.role);
  const before = notice.wasShown ?? (notice.formerRole !== undefined ? shown(notice.formerRole) : now);
  const broadcast = now || before;
  const toOthers: PresenceNotice = !now && before && !notice.unavailable ? { ...notice, unavailable: true, role: 'none' } : notice;
  for (const receiver of [...room.occupants.values()]) {
    const self = receiver === occupant;
    if (!self && !broadcast) continue;
    for (const session of receiver.sessions.values()) {
      await env.send(occupantPresence(room.jid.bare, occupant, sessionFull, affiliation, { full: session.jid.full, self, seesJids: self || seesJids(env, room, receiver) }, self ? notice : toOthers));
    }
  }
  // The leaving occupant is no longer in the map: it hears its own removal here.
  if (!room.occupants.has(occupant.nick) || room.occupants.get(occupant.nick) !== occupant) {
    for (const session of occupant.sessions.values()) {
      await env.send(occupantPresence(room.jid.bare, occupant, session.jid.full, affiliation, { full: session.jid.full, self: true, seesJids: true }, notice));
    }
  }
  if (broadcast) {
    const event = occupantPresence(room.jid.bare, occupant, sessionFull, affiliation, { full: '', self: false, seesJids: !room.options.anonymous }, toOthers);
    delete event.attrs.to;
    await sendEvent(env, room, NODE.presence, event);
  }
}

/** A message from the room itself (status codes, config changes) to every occupant session. */
export async function roomNotice(env: MucEnv, room: Room, codes: readonly number[], body?: string): Promise<void> {
  for (const occupant of room.occupants.values()) {
    for (const session of occupant.sessions.values()) {
      await env.send(
        x('message', { from: room.jid.bare, to: session.jid.full, type: 'groupchat' }, body ? x('body', {}, body) : undefined, x('x', { xmlns: NS_MUC_USER }, ...codes.map((code) => x('status', { code })))),
      );
    }
  }
}

/**
 * A groupchat message from an occupant nick (or the room, nick undefined) to every occupant session,
 * kept in history (and stored for a persistent room), and sent to subscribers of the messages node. In
 * a room that archives, a kept message is archived first (with `sender`, the real bare JID) and carries
 * its XEP-0359 stanza-id; the archive is then the stored history.
 */
export async function broadcastGroupchat(env: MucEnv, room: Room, nick: string | undefined, original: XmlElement, options: { keep: boolean; sender?: string }): Promise<void> {
  const from = nick === undefined ? room.jid.bare : `${room.jid.bare}/${nick}`;
  const message = original.clone();
  message.attrs = { from, type: 'groupchat' };
  if (original.attr('id') !== undefined) message.attrs.id = original.attr('id')!;
  if (original.attr('xml:lang') !== undefined) message.attrs['xml:lang'] = original.attr('xml:lang')!;
  // XEP-0359: a stanza-id naming the room is the room's to give, never the sender's.
  message.removeChildren((c) => c.is('stanza-id', NS_SID) && c.attr('by') === room.jid.bare);
  const now = env.now();
  room.lastActivity = now;
  const kept = options.keep && message.getChild('body') !== undefined;
  const archive = kept ? archiveOf(env, room) : undefined;
  // Awaited before anyone gets the message, as for one-to-one messages: what a client saw is archived.
  const stanzaId = archive ? await archive.archive(room.jid, message, options.sender, now) : undefined;
  if (stanzaId !== undefined) message.append(x('stanza-id', { xmlns: NS_SID, by: room.jid.bare, id: stanzaId }));
  const entry = kept ? room.history.add(message, room.jid.bare, now) : undefined;
  const recipients: string[] = [];
  for (const occupant of room.occupants.values()) for (const session of occupant.sessions.values()) recipients.push(session.jid.full);
  await env.sendEach(message, recipients);
  const node = message.getChild('subject') && !message.getChild('body') ? NODE.subject : NODE.messages;
  await sendEvent(env, room, node, message);
  // Stored after delivery (a persistent room's history and last activity): storage never delays the room.
  if (!room.options.persistent) return;
  try {
    if (entry && !archive) await env.store.addHistory(room.service, room.name, now, entry.message, env.settings.historySize);
    await env.store.touch(room.service, room.name, now);
  } catch (err) {
    env.logger.warn({ err, room: room.jid.bare }, 'could not store the history or last activity of a persistent room');
  }
}
