export const NS_PRIVACY = 'jabber:iq:privacy';
