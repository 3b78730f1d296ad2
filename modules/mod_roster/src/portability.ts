/**
 * mod_roster's part of XEP-0227 exports and imports: an account's roster as `<query xmlns='jabber:iq:roster'>`,
 * one `<item>` per contact with its name, groups and subscription (`ask='subscribe'` for a pending outbound
 * request, `approved='true'` for a pre-approval). What XEP-0227 has no word for — a pending inbound request,
 * with the presence that carried it, and a stored request from someone not in the roster — rides in a
 * `<state xmlns='urn:service:piefxis:roster:0'/>` child of the item, which other servers ignore.
 */
import { Jid, PortabilityError, x, type AccountPortability, type XmlElement } from '@service/plugin-api';
import { NS_ROSTER, itemElement } from './roster-xml.js';
import { flagsOf, subscriptionOf } from './state.js';
import type { RosterStore, StoredItem } from './store.js';
import { RosterError, type Subscription } from './types.js';
import { checkContact, checkGroups, checkNick } from './validation.js';

export const NS_ROSTER_STATE = 'urn:service:piefxis:roster:0';

const SUBSCRIPTIONS: readonly string[] = ['none', 'to', 'from', 'both'];

function itemOf(item: StoredItem): XmlElement {
  const element = itemElement(item);
  if (item.flags.pendingIn || !item.inRoster) {
    element.append(
      x('state', { xmlns: NS_ROSTER_STATE, 'pending-in': item.flags.pendingIn ? 'true' : undefined, 'in-roster': item.inRoster ? undefined : 'false' }, item.request ?? undefined),
    );
  }
  return element;
}

/** The stored form of an imported item; a RosterError names what is wrong with it. */
function storedOf(owner: Jid, item: XmlElement): StoredItem {
  if (!item.is('item')) throw new RosterError('bad-request', `unexpected <${item.local}/> in the roster (only <item/>)`);
  const contact = checkContact(owner, item.attr('jid'));
  const subscription = item.attr('subscription') ?? 'none';
  if (!SUBSCRIPTIONS.includes(subscription)) throw new RosterError('bad-request', `the item ${contact.bare} has the subscription '${subscription}' (none, to, from or both)`);
  // Only ask='subscribe' means something (RFC 6121 §2.1.2.2); older exports may carry other values, ignored.
  const ask = item.attr('ask');
  const state = item.getChild('state', NS_ROSTER_STATE);
  const request = state?.text() || undefined;
  return {
    contact: contact.bare,
    nick: checkNick(item.attr('name')),
    groups: checkGroups(item.getChildren('group').map((g) => g.text())),
    flags: {
      ...flagsOf(subscription as Subscription),
      pendingOut: ask === 'subscribe',
      pendingIn: state?.attr('pending-in') === 'true',
      approved: item.attr('approved') === 'true' || item.attr('approved') === '1',
    },
    inRoster: state?.attr('in-roster') !== 'false',
    request,
  };
}

function itemsOf(owner: Jid, elements: readonly XmlElement[]): StoredItem[] {
  const items: StoredItem[] = [];
  const seen = new Set<string>();
  for (const query of elements) {
    for (const element of query.elements()) {
      try {
        const item = storedOf(owner, element);
        if (seen.has(item.contact)) throw new RosterError('bad-request', `the contact ${item.contact} appears twice`);
        seen.add(item.contact);
        items.push(item);
      } catch (err) {
        if (err instanceof RosterError) throw new PortabilityError(`roster: ${err.message}`);
        throw err;
      }
    }
  }
  return items;
}

export function rosterPortability(store: RosterStore): AccountPortability {
  const ownerOf = (user: string, host: string) => new Jid(user, host, undefined);
  return {
    kind: 'roster',
    claims: [{ name: 'query', ns: NS_ROSTER }],
    async exportAccount(user, host) {
      const items = await store.items(ownerOf(user, host), true);
      return items.length ? [x('query', { xmlns: NS_ROSTER }, ...items.map(itemOf))] : [];
    },
    checkAccount(user, host, elements) {
      itemsOf(ownerOf(user, host), elements);
    },
    async importAccount(user, host, elements) {
      const owner = ownerOf(user, host);
      const items = itemsOf(owner, elements);
      if (!items.length) return 0;
      await store.transaction(async (trx) => {
        for (const item of items) await store.save(trx, owner, item, undefined);
        await store.nextVersion(trx, owner);
      });
      return items.length;
    },
  };
}
