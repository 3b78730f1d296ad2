/**
 * <list/> elements to privacy lists and back (XEP-0016 §2.1), with the checks the XEP asks for: an action
 * of allow or deny, unique non-negative orders, a known type with a value of its kind (a valid JID, a
 * subscription state) — <bad-request/> otherwise.
 */
import { Jid, x, type XmlElement } from '@service/plugin-api';
import { STANZA_KINDS, type Action, type ItemType, type PrivacyItem, type PrivacyList, type StanzaKind } from './model.js';
import { NS_PRIVACY } from './ns.js';
import { StanzaError } from '@service/plugin-api';

/** The width of the list name column (see migrations.ts). */
export const MAX_NAME_LENGTH = 191;
/** xs:unsignedInt. */
const MAX_ORDER = 4_294_967_295;
const ITEM_TYPES: readonly string[] = ['jid', 'group', 'subscription'];
const SUBSCRIPTIONS: readonly string[] = ['none', 'to', 'from', 'both'];

/** The list's name, checked: present, not empty, not longer than the store keeps. */
export function listName(list: XmlElement): string {
  const name = list.attr('name');
  if (name === undefined || name === '') throw new StanzaError('bad-request', 'a list needs a name');
  if ([...name].length > MAX_NAME_LENGTH) throw new StanzaError('bad-request', `a list name has at most ${MAX_NAME_LENGTH} characters`);
  return name;
}

export function parseList(list: XmlElement): PrivacyList {
  const name = listName(list);
  const items = list.elements().map(parseItem);
  const orders = new Set(items.map((item) => item.order));
  if (orders.size !== items.length) throw new StanzaError('bad-request', 'the order of each item must be unique in its list');
  return { name, items: [...items].sort((a, b) => a.order - b.order) };
}

function parseItem(item: XmlElement): PrivacyItem {
  if (item.local !== 'item') throw new StanzaError('bad-request', `<${item.local}/> is not a list item`);
  const action = item.attr('action');
  if (action !== 'allow' && action !== 'deny') throw new StanzaError('bad-request', "an item's action is allow or deny");
  const orderText = item.attr('order') ?? '';
  const order = Number(orderText);
  if (!/^\d+$/.test(orderText) || order > MAX_ORDER) throw new StanzaError('bad-request', "an item's order is a non-negative integer");
  const kinds = item.elements().map((child) => {
    if (!(STANZA_KINDS as readonly string[]).includes(child.local)) throw new StanzaError('bad-request', `<${child.local}/> is not a stanza kind of a list item`);
    return child.local as StanzaKind;
  });
  const type = item.attr('type');
  if (type === undefined) return { type: undefined, value: undefined, action, order, kinds: [...new Set(kinds)] };
  if (!ITEM_TYPES.includes(type)) throw new StanzaError('bad-request', `'${type}' is not an item type (jid, group or subscription)`);
  const raw = item.attr('value');
  if (raw === undefined) throw new StanzaError('bad-request', `an item of type ${type} needs a value`);
  return { ...typedValue(type as ItemType, raw), action: action as Action, order, kinds: [...new Set(kinds)] };
}

function typedValue(type: ItemType, raw: string): Pick<PrivacyItem, 'type' | 'value' | 'jid'> {
  if (type === 'jid') {
    const jid = Jid.tryParse(raw);
    if (!jid) throw new StanzaError('bad-request', `'${raw}' is not a valid JID`);
    return { type, value: jid.full, jid };
  }
  if (type === 'subscription' && !SUBSCRIPTIONS.includes(raw)) throw new StanzaError('bad-request', 'a subscription item is both, to, from or none');
  return { type, value: raw };
}

export function listElement(list: PrivacyList): XmlElement {
  return x('list', { name: list.name }, ...list.items.map(itemElement));
}

function itemElement(item: PrivacyItem): XmlElement {
  return x('item', { type: item.type, value: item.value, action: item.action, order: item.order }, ...item.kinds.map((kind) => x(kind)));
}

export function queryElement(...children: XmlElement[]): XmlElement {
  return x('query', { xmlns: NS_PRIVACY }, ...children);
}
