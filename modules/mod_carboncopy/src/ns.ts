export const NS_CARBONS = 'urn:xmpp:carbons:2';
export const NS_FORWARD = 'urn:xmpp:forward:0';
/** XEP-0334 message processing hints (<no-copy/>). */
export const NS_HINTS = 'urn:xmpp:hints';
export const NS_MUC_USER = 'http://jabber.org/protocol/muc#user';
