/** Presence stanzas the server sends on a session's behalf. */
import { x, type Jid, type XmlElement } from '@service/plugin-api';

/** A copy of `presence` from `from` to `to` (the original stays as the session recorded it). */
export function addressed(presence: XmlElement | undefined, from: Jid, to: Jid): XmlElement {
  const copy = presence ? presence.clone() : x('presence');
  return copy.setAttr('from', from.full).setAttr('to', to.full);
}

/** Unavailable presence, with the last status text when there is one. */
export function unavailable(from: Jid, to: Jid, status?: string): XmlElement {
  return x('presence', { type: 'unavailable', from: from.full, to: to.full }, status ? x('status', {}, status) : undefined);
}

export function probe(from: Jid, to: Jid): XmlElement {
  return x('presence', { type: 'probe', from: from.full, to: to.full });
}

/** Available (no type) or unavailable: the presence that is broadcast or directed, not subscriptions or probes. */
export function isAvailability(stanza: XmlElement): boolean {
  const type = stanza.attr('type');
  return stanza.name === 'presence' && (type === undefined || type === 'unavailable');
}
