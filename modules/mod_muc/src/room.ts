/**
 * One room's state: options, affiliations, occupants by nick, MUC/Sub subscribers, history, subject, its
 * own vCard, and whether it is still locked awaiting its owner's configuration (XEP-0045 §10.1). Plain
 * state with the lookups every handler needs; what changes it and who is told lives in the handlers (MucRooms).
 */
import { Jid } from '@service/plugin-api';
import { RoomHistory } from './history.js';
import { nickKey } from './nick.js';
import { defaultRole, type Occupant } from './occupants.js';
import type { Affiliation, AffiliationEntry, RoomOptions, SubscriberInfo } from './types.js';

export class Room {
  readonly jid: Jid;
  readonly occupants = new Map<string, Occupant>();
  readonly affiliations = new Map<string, { affiliation: Exclude<Affiliation, 'none'>; reason: string }>();
  readonly subscribers = new Map<string, SubscriberInfo>();
  /** IQs relayed between occupants and not answered yet, by the id they were relayed under (iq-relay.ts). */
  readonly relayedIqs = new Map<string, { requester: string; id: string; targetNick: string }>();
  readonly history: RoomHistory;
  subject = '';
  subjectNick = '';
  /**
   * The room's vCard (vcard-temp, as stored) and its photo hash (XEP-0153): undefined until read from
   * storage (a persistent room loads it on first use), null when the room has none.
   */
  vcard: { xml: string; photoHash: string } | null | undefined;
  /** A room created by a join stays locked (item-not-found to others) until its owner configures it. */
  locked = false;
  lastActivity: number;

  constructor(
    readonly name: string,
    readonly service: string,
    public options: RoomOptions,
    historySize: number,
    readonly createdAt: number,
    /** The virtual host whose access rules govern it. */
    readonly host: string,
  ) {
    this.jid = new Jid(name, service, undefined);
    this.history = new RoomHistory(historySize);
    this.lastActivity = createdAt;
  }

  /** The affiliation of an account, or of its domain (a server-wide ban). */
  affiliationOf(bare: string): Affiliation {
    const own = this.affiliations.get(bare)?.affiliation;
    if (own) return own;
    const at = bare.indexOf('@');
    if (at !== -1) return this.affiliations.get(bare.slice(at + 1))?.affiliation ?? 'none';
    return 'none';
  }

  affiliationList(): AffiliationEntry[] {
    return [...this.affiliations].map(([jid, a]) => ({ jid, affiliation: a.affiliation, reason: a.reason }));
  }

  occupantBySession(full: string): Occupant | undefined {
    for (const occupant of this.occupants.values()) if (occupant.sessions.has(full)) return occupant;
    return undefined;
  }

  occupantsOf(bare: string): Occupant[] {
    return [...this.occupants.values()].filter((o) => o.bare === bare);
  }

  /**
   * The occupant whose nick equals `nick` as nicks compare (RFC 7700: enforced and case-folded, see
   * nick.ts); the exact nick first, as almost every lookup is one.
   */
  occupantByNick(nick: string): Occupant | undefined {
    const exact = this.occupants.get(nick);
    if (exact) return exact;
    const key = nickKey(nick);
    for (const occupant of this.occupants.values()) if (nickKey(occupant.nick) === key) return occupant;
    return undefined;
  }

  sessionCount(): number {
    let n = 0;
    for (const occupant of this.occupants.values()) n += occupant.sessions.size;
    return n;
  }

  moderators(): Occupant[] {
    return [...this.occupants.values()].filter((o) => o.role === 'moderator');
  }

  /** The role an account gets on entry; a MUC/Sub subscriber enters a members-only room as a member would. */
  roleOnEntry(bare: string, affiliation: Affiliation, serviceAdmin: boolean): ReturnType<typeof defaultRole> {
    if (serviceAdmin) return 'moderator';
    if (affiliation === 'none' && this.options.members_only && this.subscribers.has(bare)) return defaultRole('member', this.options);
    return defaultRole(affiliation, this.options);
  }

  isEmpty(): boolean {
    return this.occupants.size === 0;
  }

  /** Subscribers count as members of a members-only room, as in ejabberd. */
  mayEnterMembersOnly(bare: string, affiliation: Affiliation): boolean {
    return affiliation !== 'none' && affiliation !== 'outcast' ? true : this.subscribers.has(bare);
  }
}
