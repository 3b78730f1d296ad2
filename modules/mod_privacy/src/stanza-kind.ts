/**
 * The kind a stanza has for privacy lists, by direction (XEP-0016 §2.1). Presence notifications are
 * presence without type or of type unavailable; subscriptions, probes and errors, like outbound messages
 * and IQs, are of no kind an item can name ('other'): only items naming no kind ("all stanzas", §2.12)
 * match them.
 */
import type { XmlElement } from '@service/plugin-api';
import type { StanzaKind } from './model.js';

export type Kind = StanzaKind | 'other';

export function inboundKind(stanza: XmlElement): Kind {
  if (stanza.name === 'message') return 'message';
  if (stanza.name === 'iq') return 'iq';
  return isNotification(stanza) ? 'presence-in' : 'other';
}

export function outboundKind(stanza: XmlElement): Kind {
  return isNotification(stanza) ? 'presence-out' : 'other';
}

/** Presence that tells availability (no type, or unavailable). */
export function isNotification(stanza: XmlElement): boolean {
  if (stanza.name !== 'presence') return false;
  const type = stanza.attr('type');
  return type === undefined || type === 'unavailable';
}
