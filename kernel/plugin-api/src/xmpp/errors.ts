/**
 * Stanza errors (RFC 6120 §8.3) and stream errors (§4.9), with the default error type of each stanza
 * condition so that callers name only the condition.
 */
import { XmlElement, x } from '../xml/element.js';
import { NS } from './ns.js';

export type StanzaErrorType = 'auth' | 'cancel' | 'continue' | 'modify' | 'wait';

export const STANZA_CONDITIONS = {
  'bad-request': 'modify',
  conflict: 'cancel',
  'feature-not-implemented': 'cancel',
  forbidden: 'auth',
  gone: 'cancel',
  'internal-server-error': 'cancel',
  'item-not-found': 'cancel',
  'jid-malformed': 'modify',
  'not-acceptable': 'modify',
  'not-allowed': 'cancel',
  'not-authorized': 'auth',
  'policy-violation': 'modify',
  'recipient-unavailable': 'wait',
  redirect: 'modify',
  'registration-required': 'auth',
  'remote-server-not-found': 'cancel',
  'remote-server-timeout': 'wait',
  'resource-constraint': 'wait',
  'service-unavailable': 'cancel',
  'subscription-required': 'auth',
  'undefined-condition': 'cancel',
  'unexpected-request': 'wait',
} as const satisfies Record<string, StanzaErrorType>;

export type StanzaCondition = keyof typeof STANZA_CONDITIONS;

/** Thrown by IQ handlers and middleware; the router answers the stanza with it. */
export class StanzaError extends Error {
  constructor(
    readonly condition: StanzaCondition,
    readonly text?: string,
    readonly type: StanzaErrorType = STANZA_CONDITIONS[condition],
    /** An application-specific condition element, e.g. XEP-0191's <blocked/>. */
    readonly appCondition?: XmlElement,
  ) {
    super(text ?? condition);
    this.name = 'StanzaError';
  }

  toElement(): XmlElement {
    return x(
      'error',
      { type: this.type },
      x(this.condition, { xmlns: NS.STANZAS }),
      this.text ? x('text', { xmlns: NS.STANZAS, 'xml:lang': 'en' }, this.text) : undefined,
      this.appCondition,
    );
  }
}

/**
 * The error reply to a stanza: same name and id, addresses swapped, type error. The original payload is
 * kept for messages and presence (RFC 6120 allows it and clients use it to tell which message failed).
 */
export function errorReply(stanza: XmlElement, error: StanzaError): XmlElement {
  const reply = x(stanza.name, { id: stanza.attr('id'), from: stanza.attr('to'), to: stanza.attr('from'), type: 'error' });
  if (stanza.name !== 'iq') reply.append(...stanza.children.filter((c) => typeof c !== 'string'));
  return reply.append(error.toElement());
}

export type StreamErrorCondition =
  | 'bad-format'
  | 'bad-namespace-prefix'
  | 'conflict'
  | 'connection-timeout'
  | 'host-gone'
  | 'host-unknown'
  | 'improper-addressing'
  | 'internal-server-error'
  | 'invalid-from'
  | 'invalid-namespace'
  | 'invalid-xml'
  | 'not-authorized'
  | 'not-well-formed'
  | 'policy-violation'
  | 'remote-connection-failed'
  | 'reset'
  | 'resource-constraint'
  | 'restricted-xml'
  | 'see-other-host'
  | 'system-shutdown'
  | 'undefined-condition'
  | 'unsupported-encoding'
  | 'unsupported-feature'
  | 'unsupported-stanza-type'
  | 'unsupported-version';

export class StreamError extends Error {
  constructor(
    readonly condition: StreamErrorCondition,
    readonly text?: string,
    /**
     * An application-specific condition (RFC 6120 §4.9.4), sent inside <stream:error> after the defined
     * condition, e.g. XEP-0198's <handled-count-too-high/>.
     */
    readonly appCondition?: XmlElement,
  ) {
    super(text ?? condition);
    this.name = 'StreamError';
  }

  toElement(): XmlElement {
    return x(
      'stream:error',
      {},
      x(this.condition, { xmlns: NS.STREAMS }),
      this.text ? x('text', { xmlns: NS.STREAMS, 'xml:lang': 'en' }, this.text) : undefined,
      this.appCondition,
    );
  }
}
