/**
 * Occupants and XEP-0045's rules on roles and affiliations: what an occupant is (one nick, one account,
 * one or more sessions), which role an affiliation gives on entry, and who may change whose role (§8) or
 * affiliation (§9, §10). The rules are pure functions so that the stanza handlers and MucApi apply the same.
 */
import type { Jid, XmlElement } from '@service/plugin-api';
import type { Affiliation, Role, RoomOptions } from './types.js';

export interface OccupantSession {
  readonly jid: Jid;
  /** The last presence this session sent to the room (its show, status, caps…), as it came. */
  presence: XmlElement;
}

export interface Occupant {
  nick: string;
  /** The account (bare JID); every session of an occupant belongs to it. */
  readonly bare: string;
  role: Role;
  /** By full JID, in joining order. */
  readonly sessions: Map<string, OccupantSession>;
  /** When the last voice request was relayed (epoch ms), for voice_request_min_interval. */
  lastVoiceRequest?: number;
}

const RANK: Readonly<Record<Affiliation, number>> = { outcast: 0, none: 1, member: 2, admin: 3, owner: 4 };

export function affiliationRank(affiliation: Affiliation): number {
  return RANK[affiliation];
}

/** The role an occupant gets on entry (ejabberd's get_default_role). */
export function defaultRole(affiliation: Affiliation, options: Readonly<RoomOptions>): Role {
  switch (affiliation) {
    case 'owner':
    case 'admin':
      return 'moderator';
    case 'member':
      return 'participant';
    case 'outcast':
      return 'none';
    case 'none':
      if (options.members_only) return 'none';
      return options.members_by_default ? 'participant' : 'visitor';
  }
}

/**
 * Whether `actor` (a moderator) may give `target` the role `role` (§8.2 kick, §8.3-8.4 voice, §9.6-9.7
 * moderator). Undefined when allowed, else the reason.
 */
export function roleChangeRefusal(actor: { role: Role; affiliation: Affiliation }, target: { role: Role; affiliation: Affiliation }, role: Role): string | undefined {
  if (actor.role !== 'moderator') return 'only moderators change roles';
  if (role === 'moderator' || target.role === 'moderator') {
    if (affiliationRank(actor.affiliation) < RANK.admin) return 'only admins and owners grant or revoke moderator';
  }
  if (role !== 'moderator' && affiliationRank(target.affiliation) >= RANK.admin) return `an ${target.affiliation} cannot be given the role ${role}`;
  return undefined;
}

/** Whether `actor` may change `target`'s affiliation from `from` to `to` (§9, §10). Undefined when allowed. */
export function affiliationChangeRefusal(actor: Affiliation, from: Affiliation, to: Affiliation): string | undefined {
  if (actor === 'owner') return undefined;
  if (actor !== 'admin') return 'only admins and owners change affiliations';
  if (affiliationRank(from) >= RANK.admin) return `an admin cannot change the affiliation of an ${from}`;
  if (affiliationRank(to) >= RANK.admin) return `an admin cannot make anyone ${to}`;
  return undefined;
}

/** The affiliations each list of §9/§10 names, and the roles of §8. */
export const AFFILIATIONS: readonly Affiliation[] = ['owner', 'admin', 'member', 'outcast', 'none'];
export const ROLES: readonly Role[] = ['moderator', 'participant', 'visitor', 'none'];

export function isAffiliation(text: string | undefined): text is Affiliation {
  return text !== undefined && (AFFILIATIONS as readonly string[]).includes(text);
}

export function isRole(text: string | undefined): text is Role {
  return text !== undefined && (ROLES as readonly string[]).includes(text);
}
