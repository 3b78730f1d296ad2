/**
 * Which messages offline storage keeps (XEP-0160 §3, XEP-0334 hints, XEP-0085 chat states):
 *
 *   - chat and normal messages only (the kernel sends nothing else to the offline chain; checked anyway);
 *   - <no-store/> is refused: the sender learns the message was not kept (<service-unavailable/>);
 *   - <store/> is kept whatever it holds;
 *   - otherwise a message is kept when it carries content: a body, a subject, or any payload other than
 *     chat states, hints, thread ids, stanza ids and AMP rules. A message with nothing else (typing
 *     notifications) is dropped without an error, as XEP-0085 asks;
 *   - a message whose expiry (expiry.ts) has passed already is dropped, or bounced when its AMP rule says
 *     action='error'.
 */
import { NS, type XmlElement } from '@service/plugin-api';
import { NS_AMP, expiryOf, type Expiry } from './expiry.js';

export const NS_HINTS = 'urn:xmpp:hints';
const NS_CHATSTATES = 'http://jabber.org/protocol/chatstates';
const NS_STANZA_ID = 'urn:xmpp:sid:0';

/** Payloads that say nothing a user reads later. */
const NOT_CONTENT = new Set([NS_CHATSTATES, NS_HINTS, NS_STANZA_ID, NS_AMP]);

export type OfflineDecision =
  | { readonly action: 'store'; readonly expiresAt: number | undefined }
  /** Not for offline storage: let the rest of the chain (by default, <service-unavailable/>) answer. */
  | { readonly action: 'pass' }
  /** Dropped silently. */
  | { readonly action: 'drop'; readonly reason: string }
  /** Expired on arrival with an AMP rule asking for an error. */
  | { readonly action: 'expired-error'; readonly rule: XmlElement };

export function decide(message: XmlElement, now: number): OfflineDecision {
  const type = message.attr('type') ?? 'normal';
  if (message.name !== 'message' || (type !== 'chat' && type !== 'normal')) return { action: 'pass' };
  if (message.getChild('no-store', NS_HINTS)) return { action: 'pass' };
  const expiry = expiryOf(message, now);
  if (expiry && expiry.at <= now) return expired(expiry);
  if (message.getChild('store', NS_HINTS) || hasContent(message)) return { action: 'store', expiresAt: expiry?.at };
  return { action: 'drop', reason: 'nothing to keep (chat states or hints only)' };
}

function expired(expiry: Expiry): OfflineDecision {
  if (expiry.ampRule?.attr('action') === 'error') return { action: 'expired-error', rule: expiry.ampRule };
  return { action: 'drop', reason: 'expired before it could be stored' };
}

function hasContent(message: XmlElement): boolean {
  return message.elements().some((child) => {
    const ns = child.ns ?? NS.CLIENT;
    if (ns === NS.CLIENT) return child.local !== 'thread';
    return !NOT_CONTENT.has(ns);
  });
}
