/**
 * Applying a list to a stanza (XEP-0016 §2.2): items in ascending order, the first that matches decides;
 * none matching allows. The roster is consulted only when a 'group' or 'subscription' item is reached,
 * and at most once per decision.
 */
import type { Jid } from '@service/plugin-api';
import { covers } from './jid-match.js';
import type { Action, PrivacyItem, PrivacyList } from './model.js';
import type { ContactRelation } from './roster-view.js';
import type { Kind } from './stanza-kind.js';

/** The other party's standing in the owner's roster; undefined when there is no roster to consult. */
export type RelationLookup = () => Promise<ContactRelation | undefined>;

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

