/**
 * Which messages are copied (XEP-0280 §6, the suggested rules): chat messages (chat states included, on
 * purpose, §9.2), normal messages with a body; never errors, groupchat or headlines, never messages the
 * sender marked <private/> (§7) or <no-copy/> (XEP-0334), never messages from a MUC (its private
 * messages included, §6) and never carbons themselves.
 */
import type { XmlElement } from '@service/plugin-api';
import { NS_CARBONS, NS_HINTS, NS_MUC_USER } from './ns.js';

export function isCopyable(message: XmlElement): boolean {
  if (message.name !== 'message') return false;
  const type = message.attr('type') ?? 'normal';
  if (type !== 'chat' && !(type === 'normal' && message.getChild('body') !== undefined)) return false;
  if (isPrivate(message) || message.getChild('no-copy', NS_HINTS)) return false;
  return !message.getChild('received', NS_CARBONS) && !message.getChild('sent', NS_CARBONS);
}

export function isPrivate(message: XmlElement): boolean {
  return message.getChild('private', NS_CARBONS) !== undefined;
}

/** A message from a MUC room or one of its occupants (XEP-0045 marks both with a muc#user <x/>). */
export function isFromMuc(message: XmlElement): boolean {
  return message.getChild('x', NS_MUC_USER) !== undefined;
}
