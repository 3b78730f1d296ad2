/**
 * The muc#admin queries (XEP-0045 §8 moderator, §9 admin and §10 owner use cases): lists by role or
 * affiliation, and changes of roles (kick, voice, moderator) and affiliations (ban, member, admin, owner).
 * A set is checked whole before anything changes: one refused item refuses the request.
 */
import { Jid, StanzaError, x, type XmlElement } from '@service/plugin-api';
import { setAffiliation, setRole } from './actions.js';
import { shownAffiliation } from './broadcast.js';
import type { MucEnv } from './context.js';
import { NS_MUC_ADMIN } from './ns.js';
import { affiliationChangeRefusal, isAffiliation, isRole, roleChangeRefusal, type Occupant } from './occupants.js';
import type { Room } from './room.js';
import type { Affiliation, Role } from './types.js';

interface Actor {
  readonly affiliation: Affiliation;
  readonly role: Role;
  readonly nick?: string;
}

export function actorOf(env: MucEnv, room: Room, from: Jid): Actor {
  const occupant = room.occupantBySession(from.full);
  const admin = env.isServiceAdmin(from.bare, room.host);
  const affiliation = admin ? 'owner' : room.affiliationOf(from.bare);
  const role = occupant?.role ?? (admin || affiliation === 'owner' || affiliation === 'admin' ? 'moderator' : 'none');
  return { affiliation, role, nick: occupant?.nick };
}

export async function adminGet(env: MucEnv, room: Room, from: Jid, query: XmlElement): Promise<XmlElement> {
  const actor = actorOf(env, room, from);
  const item = query.getChild('item');
  const affiliation = item?.attr('affiliation');
  const role = item?.attr('role');
  const out = x('query', { xmlns: NS_MUC_ADMIN });
  if (isAffiliation(affiliation) && affiliation !== 'none') {
    // §9.5, §10.5, §10.8: the lists are the admins' and owners' to read.
    if (actor.affiliation !== 'owner' && actor.affiliation !== 'admin') throw new StanzaError('forbidden', `you may not see the ${affiliation} list`);
    for (const entry of room.affiliationList()) {
      if (entry.affiliation !== affiliation) continue;
      out.append(x('item', { affiliation, jid: entry.jid }, entry.reason ? x('reason', {}, entry.reason) : undefined));
    }
    return out;
  }
  if (isRole(role) && role !== 'none') {
    if (actor.role !== 'moderator') throw new StanzaError('forbidden', `you may not see the ${role} list`);
    for (const occupant of room.occupants.values()) {
      if (occupant.role !== role) continue;
      const session = [...occupant.sessions.values()][0];
      out.append(x('item', { role, nick: occupant.nick, affiliation: shownAffiliation(env, room, occupant.bare), jid: session?.jid.full }));
    }
    return out;
  }
  throw new StanzaError('bad-request', 'ask for a list by role or affiliation');
}

type Change =
  | { readonly kind: 'role'; readonly occupant: Occupant; readonly role: Role; readonly reason?: string }
  | { readonly kind: 'affiliation'; readonly bare: string; readonly affiliation: Affiliation; readonly reason?: string };

export async function adminSet(env: MucEnv, room: Room, from: Jid, query: XmlElement): Promise<void> {
  const actor = actorOf(env, room, from);
  const items = query.getChildren('item');
  if (items.length === 0) throw new StanzaError('bad-request', 'no item to change');
  const changes: Change[] = [];
  for (const item of items) {
    const reason = item.getChildText('reason');
    const role = item.attr('role');
    const affiliation = item.attr('affiliation');
    if (role !== undefined) {
      if (!isRole(role)) throw new StanzaError('bad-request', `'${role}' is not a role`);
      const nick = item.attr('nick');
      const occupant = nick !== undefined ? room.occupantByNick(nick) : undefined;
      if (!occupant) throw new StanzaError('item-not-found', `there is no occupant '${nick ?? ''}' in this room`);
      const refusal = roleChangeRefusal(actor, { role: occupant.role, affiliation: shownAffiliation(env, room, occupant.bare) }, role);
      if (refusal) throw new StanzaError(actor.role === 'moderator' ? 'not-allowed' : 'forbidden', refusal);
      if (role !== 'moderator' && env.isServiceAdmin(occupant.bare, room.host)) throw new StanzaError('not-allowed', 'a service administrator keeps the moderator role');
      changes.push({ kind: 'role', occupant, role, reason });
      continue;
    }
    if (affiliation !== undefined) {
      if (!isAffiliation(affiliation)) throw new StanzaError('bad-request', `'${affiliation}' is not an affiliation`);
      const bare = targetBare(room, item);
      const current = room.affiliationOf(bare);
      const refusal = affiliationChangeRefusal(actor.affiliation, current, affiliation);
      if (refusal) throw new StanzaError('forbidden', refusal);
      changes.push({ kind: 'affiliation', bare, affiliation, reason });
      continue;
    }
    throw new StanzaError('bad-request', 'an item names a role or an affiliation');
  }
  const owners = room.affiliationList().filter((a) => a.affiliation === 'owner').map((a) => a.jid);
  const remaining = owners.filter((o) => !changes.some((c) => c.kind === 'affiliation' && c.bare === o && c.affiliation !== 'owner'));
  const added = changes.some((c) => c.kind === 'affiliation' && c.affiliation === 'owner');
  if (owners.length > 0 && remaining.length === 0 && !added) throw new StanzaError('conflict', 'a room keeps at least one owner');
  for (const change of changes) {
    if (change.kind === 'role') {
      if (room.occupants.get(change.occupant.nick) !== change.occupant) continue;
      await setRole(env, room, change.occupant, change.role, actor.nick, change.reason);
    } else {
      await setAffiliation(env, room, change.bare, change.affiliation, actor.nick, change.reason ?? '');
    }
  }
}

function targetBare(room: Room, item: XmlElement): string {
  const jidText = item.attr('jid');
  if (jidText !== undefined) {
    const jid = Jid.tryParse(jidText);
    if (!jid) throw new StanzaError('jid-malformed', `'${jidText}' is not a valid JID`);
    return jid.bare;
  }
  const nick = item.attr('nick');
  const occupant = nick !== undefined ? room.occupantByNick(nick) : undefined;
  if (!occupant) throw new StanzaError('item-not-found', `there is no occupant '${nick ?? ''}' in this room`);
  return occupant.bare;
}
