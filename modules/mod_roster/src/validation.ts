/**
 * What a roster item may contain (RFC 6121 §2.1.2, errors of §2.3.3), for roster sets and the API alike.
 * Problems are `RosterError`s carrying the stanza error condition the RFC names.
 */
import { Jid, type XmlElement } from '@service/plugin-api';
import { GROUP_LENGTH, JID_LENGTH } from './migrations.js';
import { RosterError } from './types.js';

/** Longest name accepted (a server-configured limit in RFC terms; names are stored as text). */
export const NICK_LENGTH = 1023;

function length(text: string): number {
  return [...text].length;
}

/** The contact of an item: a valid bare JID that fits the column and is not the owner's own. */
export function checkContact(owner: Jid, value: Jid | string | undefined): Jid {
  if (value === undefined || value === '') throw new RosterError('bad-request', 'the item has no jid');
  const contact = typeof value === 'string' ? Jid.tryParse(value) : value;
  if (!contact) throw new RosterError('jid-malformed', `'${String(value)}' is not a valid JID`);
  if (!contact.isBare) throw new RosterError('bad-request', 'roster items are bare JIDs, without a resource');
  if (length(contact.bare) > JID_LENGTH) throw new RosterError('not-acceptable', `JIDs in a roster are limited to ${JID_LENGTH} characters`);
  if (contact.bare === owner.bare) throw new RosterError('not-allowed', 'an account cannot be in its own roster');
  return contact;
}

export function checkNick(nick: string | undefined): string | undefined {
  if (nick === undefined || nick === '') return undefined;
  if (length(nick) > NICK_LENGTH) throw new RosterError('not-acceptable', `names are limited to ${NICK_LENGTH} characters`);
  return nick;
}

/** Groups, sorted: not empty, not too long, no duplicates. */
export function checkGroups(groups: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const group of groups) {
    if (group === '') throw new RosterError('not-acceptable', 'a group has no name');
    if (length(group) > GROUP_LENGTH) throw new RosterError('not-acceptable', `group names are limited to ${GROUP_LENGTH} characters`);
    if (seen.has(group)) throw new RosterError('bad-request', `the group '${group}' appears twice`);
    seen.add(group);
  }
  return [...seen].sort();
}

export type RosterSetRequest =
  | { readonly kind: 'remove'; readonly contact: Jid }
  | { readonly kind: 'update'; readonly contact: Jid; readonly nick: string | undefined; readonly groups: string[] };

/**
 * A roster set's query: exactly one item. A subscription attribute other than 'remove' is ignored, as are
 * 'ask' and 'approved' (RFC 6121 §2.1.2: the server sets those).
 */
export function parseRosterSet(owner: Jid, query: XmlElement): RosterSetRequest {
  const items = query.getChildren('item');
  if (items.length !== 1 || query.elements().length !== 1) throw new RosterError('bad-request', 'a roster set carries exactly one item');
  const item = items[0]!;
  const contact = checkContact(owner, item.attr('jid'));
  if (item.attr('subscription') === 'remove') return { kind: 'remove', contact };
  const groups = checkGroups(item.getChildren('group').map((g) => g.text()));
  return { kind: 'update', contact, nick: checkNick(item.attr('name')), groups };
}
