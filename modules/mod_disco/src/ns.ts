export const NS_DISCO_INFO = 'http://jabber.org/protocol/disco#info';
export const NS_DISCO_ITEMS = 'http://jabber.org/protocol/disco#items';
