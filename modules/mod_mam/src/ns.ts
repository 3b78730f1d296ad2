/** The namespaces mod_mam speaks, in one place so that every file names them the same way. */
export const NS_MAM = 'urn:xmpp:mam:2';
export const NS_MAM_EXTENDED = 'urn:xmpp:mam:2#extended';
export const NS_SID = 'urn:xmpp:sid:0';
export const NS_FORWARD = 'urn:xmpp:forward:0';
export const NS_DELAY = 'urn:xmpp:delay';
export const NS_RSM = 'http://jabber.org/protocol/rsm';
export const NS_DATA = 'jabber:x:data';
export const NS_HINTS = 'urn:xmpp:hints';
