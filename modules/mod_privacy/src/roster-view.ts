/**
 * What privacy lists need from mod_roster (an optional dependency): a contact's subscription state and
 * groups, and the groups of a roster. Adapted at runtime, since mod_roster may be absent: without it
 * 'group' and 'subscription' items match nobody.
 */
import type { Jid } from '@service/plugin-api';
import type { Subscription } from './model.js';

export interface ContactRelation {
  readonly subscription: Subscription;
  readonly groups: readonly string[];
}

export interface RosterView {
  /** How `contact` stands in the owner's roster; subscription 'none' and no groups when absent. */
  relation(owner: Jid, contact: Jid): Promise<ContactRelation>;
  /** Every group name of the owner's roster. */
  groups(owner: Jid): Promise<Set<string>>;
}

/** The part of mod_roster's api used (see its RosterApi). */
interface RosterApiShape {
  getItem(owner: string, contact: string): Promise<{ subscription: string; groups: readonly string[]; inRoster?: boolean } | undefined>;
  getRoster(owner: string): Promise<Array<{ groups: readonly string[] }>>;
}

const NOT_IN_ROSTER: ContactRelation = { subscription: 'none', groups: [] };

export function rosterViewOf(api: unknown): RosterView | undefined {
  if (typeof api !== 'object' || api === null) return undefined;
  const candidate = api as Partial<RosterApiShape>;
  if (typeof candidate.getItem !== 'function' || typeof candidate.getRoster !== 'function') return undefined;
  const roster = api as RosterApiShape;
  return {
    async relation(owner, contact) {
      const item = await roster.getItem(owner.bare, contact.bare);
      // A stored subscription request from someone not in the roster is no roster item.
      if (!item || item.inRoster === false) return NOT_IN_ROSTER;
      const subscription = (['none', 'to', 'from', 'both'] as const).find((s) => s === item.subscription) ?? 'none';
      return { subscription, groups: item.groups };
    },
    async groups(owner) {
      const items = await roster.getRoster(owner.bare);
      return new Set(items.flatMap((item) => item.groups));
    },
  };
}
