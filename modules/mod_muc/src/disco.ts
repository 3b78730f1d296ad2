/**
 * Service discovery of the conference service and its rooms (XEP-0045 §6): the service's identity and
 * features, its public rooms, a room's identity, muc_* features (and MAM's when it archives) and
 * muc#roominfo form, a room's occupants (when they may be listed), and the reserved nick query (§7.12,
 * node x-roomuser-item).
 */
import { StanzaError, x, type Jid, type XmlElement } from '@service/plugin-api';
import { formField } from './config-form.js';
import { NS_DATA, NS_DISCO_INFO, NS_DISCO_ITEMS, NS_MAM, NS_MAM_EXTENDED, NS_MUC, NS_MUC_ROOMINFO, NS_MUCSUB, NS_REGISTER, NS_SID } from './ns.js';
import type { Room } from './room.js';
import { NS_VCARD } from './vcard.js';

export function serviceInfo(query: XmlElement): XmlElement {
  if (query.attr('node') !== undefined) throw new StanzaError('item-not-found', 'no such node');
  return x(
    'query',
    { xmlns: NS_DISCO_INFO },
    x('identity', { category: 'conference', type: 'text', name: 'Chatrooms' }),
    ...[NS_DISCO_INFO, NS_DISCO_ITEMS, NS_MUC, NS_REGISTER, NS_MUCSUB].map((v) => x('feature', { var: v })),
  );
}

export function serviceItems(rooms: ReadonlyArray<{ jid: string; name: string }>, max: number): XmlElement {
  const out = x('query', { xmlns: NS_DISCO_ITEMS });
  for (const room of rooms.slice(0, max)) out.append(x('item', { jid: room.jid, name: room.name }));
  return out;
}

/** `archived`: the room archives now (its `mam` is on and a module archives), so it answers MAM queries. */
export function roomInfo(room: Room, registeredNick: string | undefined, query: XmlElement, archived: boolean): XmlElement {
  const node = query.attr('node');
  if (node === 'x-roomuser-item') {
    const out = x('query', { xmlns: NS_DISCO_INFO, node });
    if (registeredNick !== undefined) out.append(x('identity', { category: 'conference', type: 'text', name: registeredNick }));
    return out;
  }
  if (node !== undefined) throw new StanzaError('item-not-found', 'no such node');
  const o = room.options;
  const features = [
    NS_MUC,
    NS_DISCO_INFO,
    NS_DISCO_ITEMS,
    o.public ? 'muc_public' : 'muc_hidden',
    o.persistent ? 'muc_persistent' : 'muc_temporary',
    o.members_only ? 'muc_membersonly' : 'muc_open',
    o.moderated ? 'muc_moderated' : 'muc_unmoderated',
    o.anonymous ? 'muc_semianonymous' : 'muc_nonanonymous',
    o.password_protected ? 'muc_passwordprotected' : 'muc_unsecured',
    ...(o.allow_subscription ? [NS_MUCSUB] : []),
    ...(archived ? [NS_MAM, NS_MAM_EXTENDED, NS_SID] : []),
    // The room's own vCard (vcard.ts).
    NS_VCARD,
  ];
  return x(
    'query',
    { xmlns: NS_DISCO_INFO },
    x('identity', { category: 'conference', type: 'text', name: o.title || room.name }),
    ...features.map((v) => x('feature', { var: v })),
    x(
      'x',
      { xmlns: NS_DATA, type: 'result' },
      formField('FORM_TYPE', 'hidden', [NS_MUC_ROOMINFO]),
      formField('muc#roominfo_description', 'text-single', [o.description], 'Room description'),
      formField('muc#roominfo_occupants', 'text-single', [String(room.occupants.size)], 'Number of occupants'),
      formField('muc#roominfo_subject', 'text-single', [room.subject], 'Current subject'),
      formField('muc#roominfo_lang', 'text-single', [o.lang], 'Language'),
      formField('muc#roomconfig_roomname', 'text-single', [o.title], 'Room title'),
      formField('muc#roomconfig_changesubject', 'boolean', [o.allow_change_subj ? '1' : '0'], 'Occupants may change the subject'),
      formField('muc#roomconfig_allowinvites', 'boolean', [o.allow_user_invites ? '1' : '0'], 'Occupants may invite'),
    ),
  );
}

/** The occupants as items, to occupants and when the room lists them (public_list); else none. */
export function roomItems(room: Room, from: Jid): XmlElement {
  const out = x('query', { xmlns: NS_DISCO_ITEMS });
  const listed = room.options.public_list || room.occupantBySession(from.full) !== undefined;
  if (!listed) return out;
  for (const occupant of room.occupants.values()) out.append(x('item', { jid: `${room.jid.bare}/${occupant.nick}`, name: occupant.nick }));
  return out;
}
