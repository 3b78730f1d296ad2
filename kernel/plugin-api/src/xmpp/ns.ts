/** XML namespaces of the core protocol (RFC 6120/6121) and the stream-level XEPs the kernel knows. */
export const NS = {
  CLIENT: 'jabber:client',
  STREAM: 'http://etherx.jabber.org/streams',
  STREAMS: 'urn:ietf:params:xml:ns:xmpp-streams',
  STANZAS: 'urn:ietf:params:xml:ns:xmpp-stanzas',
  TLS: 'urn:ietf:params:xml:ns:xmpp-tls',
  SASL: 'urn:ietf:params:xml:ns:xmpp-sasl',
  BIND: 'urn:ietf:params:xml:ns:xmpp-bind',
  SESSION: 'urn:ietf:params:xml:ns:xmpp-session',
  FRAMING: 'urn:ietf:params:xml:ns:xmpp-framing',
  XML: 'http://www.w3.org/XML/1998/namespace',
} as const;
