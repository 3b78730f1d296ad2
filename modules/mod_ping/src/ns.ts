export const NS_PING = 'urn:xmpp:ping';
