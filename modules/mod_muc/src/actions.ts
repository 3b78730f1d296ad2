/**
 * Changes to a room that both stanzas and MucApi make, each with what XEP-0045 says occupants see: role
 * changes (§8), affiliation changes with their removals (301 ban, 321 affiliation change, 322 members-only),
 * configuration changes (104, 170/171/172/173, persistence), destruction (§10.9, with the room's
 * archive), and the writes that keep a persistent room's stored state in step; the room-level ones also go
 * to MUC/Sub subscribers of the system node.
 */
import { x } from '@service/plugin-api';
import { forgetArchive } from './archive.js';
import { broadcastPresence, roomNotice } from './broadcast.js';
import type { MucEnv } from './context.js';
import { NODE, sendEvent, systemNotice } from './mucsub.js';
import { NS_MUC_USER } from './ns.js';
import type { Occupant } from './occupants.js';
import type { PresenceNotice } from './presence.js';
import type { Room } from './room.js';
import type { Affiliation, Role, RoomOptions } from './types.js';
import { loadVcard } from './vcard.js';

/** Saves the room's own row when it is persistent. */
export async function persistRoom(env: MucEnv, room: Room): Promise<void> {
  if (!room.options.persistent) return;
  await env.store.saveRoom({
    service: room.service,
    name: room.name,
    options: JSON.stringify(room.options),
    subject: room.subject,
    subjectNick: room.subjectNick,
    createdAt: room.createdAt,
    lastActivity: room.lastActivity,
  });
}

/** Writes everything of a room that just became persistent. */
export async function persistAll(env: MucEnv, room: Room): Promise<void> {
  await env.store.saveAll(
    { service: room.service, name: room.name, options: JSON.stringify(room.options), subject: room.subject, subjectNick: room.subjectNick, createdAt: room.createdAt, lastActivity: room.lastActivity },
    room.affiliationList(),
    [...room.subscribers.values()],
    room.history.entries(),
    room.vcard?.xml,
  );
}

/** Removes an occupant (every session) with the given notice; the room is told. */
export async function removeOccupant(env: MucEnv, room: Room, occupant: Occupant, notice: PresenceNotice): Promise<void> {
  room.occupants.delete(occupant.nick);
  await broadcastPresence(env, room, occupant, { ...notice, unavailable: true, role: 'none' });
}

export async function setRole(env: MucEnv, room: Room, occupant: Occupant, role: Role, actorNick?: string, reason?: string): Promise<void> {
  if (role === 'none') {
    await removeOccupant(env, room, occupant, { codes: [307], actorNick, reason });
    return;
  }
  const formerRole = occupant.role;
  occupant.role = role;
  await broadcastPresence(env, room, occupant, { actorNick, reason, formerRole });
}

/**
 * Sets (or with 'none' removes) an affiliation and applies it to the account's occupants: an outcast is
 * removed with 301; in a members-only room, losing membership removes with 321; otherwise the role follows
 * the new affiliation.
 */
export async function setAffiliation(env: MucEnv, room: Room, bare: string, affiliation: Affiliation, actorNick?: string, reason = ''): Promise<void> {
  if (affiliation === 'none') room.affiliations.delete(bare);
  else room.affiliations.set(bare, { affiliation, reason });
  if (room.options.persistent) {
    if (affiliation === 'none') await env.store.removeAffiliation(room.service, room.name, bare);
    else await env.store.setAffiliation(room.service, room.name, { jid: bare, affiliation, reason });
  }
  const affected = bare.includes('@') ? room.occupantsOf(bare) : [...room.occupants.values()].filter((o) => o.bare.endsWith(`@${bare}`));
  for (const occupant of affected) {
    const admin = env.isServiceAdmin(occupant.bare, room.host);
    const effective = room.affiliationOf(occupant.bare);
    if (effective === 'outcast' && !admin) {
      await removeOccupant(env, room, occupant, { codes: [301], actorNick, reason });
    } else if (room.options.members_only && effective === 'none' && !admin && !room.subscribers.has(occupant.bare)) {
      await removeOccupant(env, room, occupant, { codes: [321], actorNick, reason });
    } else {
      const formerRole = occupant.role;
      occupant.role = room.roleOnEntry(occupant.bare, effective, admin);
      await broadcastPresence(env, room, occupant, { actorNick, reason, formerRole });
    }
  }
  await sendEvent(env, room, NODE.affiliations, x('message', { from: room.jid.bare }, x('x', { xmlns: NS_MUC_USER }, x('item', { jid: bare, affiliation }))));
}

/**
 * New options for a room: occupants are told (104, and 170-173 for logging and anonymity changes), a
 * room that became members-only loses its non-members (322), a persistent room is written, a room that
 * stopped being persistent is removed from storage (and destroyed when empty: returns true).
 */
export async function applyOptions(env: MucEnv, room: Room, options: RoomOptions): Promise<{ destroyed: boolean }> {
  const before = room.options;
  // A room leaving storage keeps its vCard in memory: read it while it is still there.
  if (before.persistent && !options.persistent) await loadVcard(env, room);
  room.options = options;
  const codes = [104];
  if (!before.logging && options.logging) codes.push(170);
  if (before.logging && !options.logging) codes.push(171);
  if (before.anonymous && !options.anonymous) codes.push(172);
  if (!before.anonymous && options.anonymous) codes.push(173);
  if (!before.members_only && options.members_only) {
    for (const occupant of [...room.occupants.values()]) {
      if (room.mayEnterMembersOnly(occupant.bare, room.affiliationOf(occupant.bare)) || env.isServiceAdmin(occupant.bare, room.host)) continue;
      await removeOccupant(env, room, occupant, { codes: [322] });
    }
  }
  // A new presence_broadcast: occupants it now shows appear to the others, those it now hides go.
  for (const occupant of [...room.occupants.values()]) {
    const wasShown = before.presence_broadcast.some((r) => r === occupant.role);
    if (wasShown !== options.presence_broadcast.some((r) => r === occupant.role)) await broadcastPresence(env, room, occupant, { wasShown });
  }
  if (before.persistent && !options.persistent) {
    await env.store.deleteRoom(room.service, room.name);
  } else if (!before.persistent && options.persistent) {
    await persistAll(env, room);
  } else {
    await persistRoom(env, room);
  }
  await roomNotice(env, room, codes);
  await sendEvent(env, room, NODE.config, x('message', { from: room.jid.bare }, x('x', { xmlns: NS_MUC_USER }, ...codes.map((code) => x('status', { code })))));
  await systemNotice(env, room, x('x', { xmlns: NS_MUC_USER }, ...codes.map((code) => x('status', { code }))));
  return { destroyed: !options.persistent && room.isEmpty() && !room.locked };
}

/** Destroys a room (§10.9): every occupant gets the destroy presence; stored state and its archive go. */
export async function destroyRoom(env: MucEnv, room: Room, reason?: string, alternate?: string): Promise<void> {
  for (const occupant of [...room.occupants.values()]) {
    await removeOccupant(env, room, occupant, { destroy: { alternate, reason } });
  }
  await sendEvent(env, room, NODE.config, x('message', { from: room.jid.bare }, x('x', { xmlns: NS_MUC_USER }, x('destroy', { jid: alternate }, reason ? x('reason', {}, reason) : undefined))));
  await systemNotice(env, room, x('x', { xmlns: NS_MUC_USER }, x('destroy', { jid: alternate }, reason ? x('reason', {}, reason) : undefined)));
  await env.store.deleteRoom(room.service, room.name);
  await forgetArchive(env, room);
}

/** The server is stopping: occupants are told the room is going away for now (332). */
export async function shutdownRoom(env: MucEnv, room: Room): Promise<void> {
  for (const occupant of [...room.occupants.values()]) {
    await removeOccupant(env, room, occupant, { codes: [332] }).catch(() => undefined);
  }
  await systemNotice(env, room, x('x', { xmlns: NS_MUC_USER }, x('status', { code: 332 }))).catch(() => undefined);
}

