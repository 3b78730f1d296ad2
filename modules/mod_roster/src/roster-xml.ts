/** The jabber:iq:roster elements (RFC 6121 §2.1) as clients see them. */
import { x, type XmlElement } from '@service/plugin-api';
import { subscriptionOf } from './state.js';
import type { StoredItem } from './store.js';

export const NS_ROSTER = 'jabber:iq:roster';
export const NS_ROSTER_VERSIONING = 'urn:xmpp:features:rosterver';
export const NS_PRE_APPROVAL = 'urn:xmpp:features:pre-approval';

/** An item as a roster result or push carries it. */
export function itemElement(item: StoredItem): XmlElement {
  return x(
    'item',
    {
      jid: item.contact,
      name: item.nick,
      subscription: subscriptionOf(item.flags),
      ask: item.flags.pendingOut ? 'subscribe' : undefined,
      approved: item.flags.approved ? 'true' : undefined,
    },
    ...item.groups.map((group) => x('group', {}, group)),
  );
}

/** The push of a removed item (RFC 6121 §2.5.2). */
export function removedItemElement(contact: string): XmlElement {
  return x('item', { jid: contact, subscription: 'remove' });
}

export function rosterQuery(items: readonly XmlElement[], version: string | undefined): XmlElement {
  return x('query', { xmlns: NS_ROSTER, ver: version }, ...items);
}
