/**
 * Applying a list to a stanza (XEP-0016 §2.2): items in ascending order, the first that matches decides;
 * none matching allows. The roster (mod_roster's service, when it runs) is consulted only when a 'group'
 * or 'subscription' item is reached, and at most once per decision; without it those items match nobody.
 */
import type { Jid } from '@service/plugin-api';
import type { RosterApi, RosterItem } from '@service/mod_roster/api';
import { covers } from './jid-match.js';
import type { Action, PrivacyItem, PrivacyList } from './model.js';
import type { Kind } from './stanza-kind.js';

/** What 'subscription' and 'group' items match against. */
export type ContactRelation = Pick<RosterItem, 'subscription' | 'groups'>;

/** The other party's standing in the owner's roster; undefined when there is no roster to consult. */
export type RelationLookup = () => Promise<ContactRelation | undefined>;

const NOT_IN_ROSTER: ContactRelation = { subscription: 'none', groups: [] };

/** How `contact` stands in `owner`'s roster: subscription 'none' and no groups when it is not in it. */
export async function relationIn(roster: RosterApi | undefined, owner: Jid, contact: Jid): Promise<ContactRelation | undefined> {
  if (!roster) return undefined;
  const item = await roster.getItem(owner.bare, contact.bare);
  // A stored subscription request from someone not in the roster is no roster item.
  return item?.inRoster ? item : NOT_IN_ROSTER;
}

export async function decide(list: PrivacyList, other: Jid, kind: Kind, relationOf: RelationLookup): Promise<Action> {
  let relation: Promise<ContactRelation | undefined> | undefined;
  const lookup = () => (relation ??= relationOf());
  for (const item of list.items) {
    if (!appliesTo(item, kind)) continue;
    if (await matches(item, other, lookup)) return item.action;
  }
  return 'allow';
}

function appliesTo(item: PrivacyItem, kind: Kind): boolean {
  if (item.kinds.length === 0) return true;
  return kind !== 'other' && item.kinds.includes(kind);
}

async function matches(item: PrivacyItem, other: Jid, relation: RelationLookup): Promise<boolean> {
  switch (item.type) {
    case undefined:
      return true;
    case 'jid':
      return item.jid !== undefined && covers(item.jid, other);
    case 'subscription':
      return (await relation())?.subscription === item.value;
    case 'group':
      return (await relation())?.groups.includes(item.value!) === true;
  }
}

