export const NS_BLOCKING = 'urn:xmpp:blocking';
/** The application-specific condition of a refused outbound stanza (XEP-0191 §3.3). */
export const NS_BLOCKING_ERRORS = 'urn:xmpp:blocking:errors';
