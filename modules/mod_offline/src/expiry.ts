/**
 * When a message stops being worth delivering:
 *
 *   XEP-0079 (Advanced Message Processing): <amp><rule condition='expire-at' value='<XEP-0082 time>' action=…/></amp>
 *   XEP-0023 (Message Expiration, obsolete but still sent): <x xmlns='jabber:x:expire' seconds='N'/>
 *
 * The earliest time wins. Expired messages are never delivered from offline storage and are purged.
 */
import type { XmlElement } from '@service/plugin-api';

export const NS_AMP = 'http://jabber.org/protocol/amp';
export const NS_AMP_ERRORS = 'http://jabber.org/protocol/amp#errors';
export const NS_EXPIRE = 'jabber:x:expire';

/** XEP-0082 DateTime: date, time, optional fraction, and a zone (Z or ±hh:mm). */
const XEP_0082_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

export interface Expiry {
  /** Milliseconds since the epoch. */
  readonly at: number;
  /** The AMP rule that set it (for the error an 'error' action asks for); undefined for XEP-0023. */
  readonly ampRule?: XmlElement;
}

export function expiryOf(message: XmlElement, now: number): Expiry | undefined {
  let earliest: Expiry | undefined;
  const consider = (candidate: Expiry) => {
    if (!earliest || candidate.at < earliest.at) earliest = candidate;
  };
  for (const amp of message.getChildren('amp', NS_AMP)) {
    for (const rule of amp.getChildren('rule', NS_AMP)) {
      if (rule.attr('condition') !== 'expire-at') continue;
      const value = rule.attr('value')?.trim() ?? '';
      const at = XEP_0082_DATETIME.test(value) ? Date.parse(value) : Number.NaN;
      if (Number.isFinite(at)) consider({ at, ampRule: rule });
    }
  }
  const legacy = message.getChild('x', NS_EXPIRE);
  const seconds = Number(legacy?.attr('seconds'));
  if (legacy && Number.isFinite(seconds) && seconds >= 0) consider({ at: now + seconds * 1000 });
  return earliest;
}

/**
 * The copy to deliver after `storedMs` in storage: XEP-0023 asks the server to count the time spent
 * stored off the seconds left.
 */
export function withRemainingSeconds(message: XmlElement, storedMs: number): XmlElement {
  const legacy = message.getChild('x', NS_EXPIRE);
  const seconds = Number(legacy?.attr('seconds'));
  if (!legacy || !Number.isFinite(seconds)) return message;
  legacy.setAttr('seconds', String(Math.max(0, Math.floor(seconds - storedMs / 1000))));
  return message;
}
