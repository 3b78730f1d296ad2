/**
 * Which messages wake a device, and what they tell the summary. A notification is worth sending for what
 * the user would want to read: a chat, normal or groupchat message with a body, or with an end-to-end
 * encrypted payload (OMEMO, OpenPGP), whose body is then '(encrypted)' as ejabberd says. A received
 * carbon copy (XEP-0280) counts as the message it carries, from its sender; a sent carbon is the user's
 * own message from another device, and wakes nobody. Chat states, receipts, headlines and errors wake
 * nobody either.
 */
import type { Jid, XmlElement } from '@service/plugin-api';
import { NS_CARBONS, NS_FORWARD } from './ns.js';
import type { MessageFacts } from './notification.js';

const NOTIFIED_TYPES = new Set(['chat', 'normal', 'groupchat']);
/** Payloads that carry an encrypted message in place of the body. */
const ENCRYPTED = [
  { name: 'encrypted', ns: 'eu.siacs.conversations.axolotl' },
  { name: 'encrypted', ns: 'urn:xmpp:omemo:2' },
  { name: 'openpgp', ns: 'urn:xmpp:openpgp:0' },
  { name: 'x', ns: 'jabber:x:encrypted' },
];

/** What the summary may say about `message` for `account`, or undefined when it wakes nobody. */
export function factsOf(message: XmlElement, account: Jid): MessageFacts | undefined {
  if (message.name !== 'message') return undefined;
  const carried = carbonOf(message, account);
  if (carried === null) return undefined;
  const read = carried ?? message;
  if (!NOTIFIED_TYPES.has(read.attr('type') ?? 'normal')) return undefined;
  const body = read.getChildText('body');
  if (body) return { sender: read.attr('from') ?? '', body };
  if (ENCRYPTED.some((e) => read.getChild(e.name, e.ns))) return { sender: read.attr('from') ?? '', body: '(encrypted)' };
  return undefined;
}

/**
 * The message a received carbon carries; null for a sent carbon (or a malformed one); undefined when
 * `message` is no carbon. Only the account's own bare JID sends carbons to it.
 */
function carbonOf(message: XmlElement, account: Jid): XmlElement | null | undefined {
  if (message.attr('from') !== account.bare) return undefined;
  const received = message.getChild('received', NS_CARBONS);
  if (received) return received.getChild('forwarded', NS_FORWARD)?.getChild('message') ?? null;
  if (message.getChild('sent', NS_CARBONS)) return null;
  return undefined;
}
