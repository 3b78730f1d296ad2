/**
 * The XML namespaces mod_muc speaks (XEP-0045 and its forms, MUC/Sub, delay, direct invitations, disco,
 * in-band registration, data forms, the room archive's MAM and stanza ids), in one place so that every file spells them the same way.
 */
export const NS_MUC = 'http://jabber.org/protocol/muc';
export const NS_MUC_USER = 'http://jabber.org/protocol/muc#user';
export const NS_MUC_ADMIN = 'http://jabber.org/protocol/muc#admin';
export const NS_MUC_OWNER = 'http://jabber.org/protocol/muc#owner';
export const NS_MUC_ROOMCONFIG = 'http://jabber.org/protocol/muc#roomconfig';
export const NS_MUC_ROOMINFO = 'http://jabber.org/protocol/muc#roominfo';
export const NS_MUC_REQUEST = 'http://jabber.org/protocol/muc#request';
export const NS_MUC_REGISTER = 'http://jabber.org/protocol/muc#register';
export const NS_MUCSUB = 'urn:xmpp:mucsub:0';
export const NS_PUBSUB_EVENT = 'http://jabber.org/protocol/pubsub#event';
export const NS_DELAY = 'urn:xmpp:delay';
export const NS_CONFERENCE = 'jabber:x:conference';
export const NS_DISCO_INFO = 'http://jabber.org/protocol/disco#info';
export const NS_DISCO_ITEMS = 'http://jabber.org/protocol/disco#items';
export const NS_REGISTER = 'jabber:iq:register';
export const NS_DATA = 'jabber:x:data';
export const NS_MAM = 'urn:xmpp:mam:2';
export const NS_MAM_EXTENDED = 'urn:xmpp:mam:2#extended';
export const NS_SID = 'urn:xmpp:sid:0';
