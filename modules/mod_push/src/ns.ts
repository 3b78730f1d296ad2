/** The namespaces mod_push speaks, in one place so that every file names them the same way. */
export const NS_PUSH = 'urn:xmpp:push:0';
export const NS_PUBSUB = 'http://jabber.org/protocol/pubsub';
export const NS_DATA = 'jabber:x:data';
/** The FORM_TYPE of a notification's summary (XEP-0357 §5). */
export const NS_PUSH_SUMMARY = 'urn:xmpp:push:summary';
/** The FORM_TYPE of the publish options a client may give with <enable/> (XEP-0357 §5, XEP-0060 §7.1.5). */
export const NS_PUBLISH_OPTIONS = 'http://jabber.org/protocol/pubsub#publish-options';
export const NS_CARBONS = 'urn:xmpp:carbons:2';
export const NS_FORWARD = 'urn:xmpp:forward:0';
