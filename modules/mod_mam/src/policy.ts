/**
 * What gets archived, and for whom:
 *
 *   - one-to-one messages (type chat or normal, or no type) with a <body>: chat states, receipts and the
 *     like carry nothing to read back later, and groupchat belongs to room archives;
 *   - in a room archive, groupchat messages with a <body> (subject changes are the room's state, not
 *     its conversation);
 *   - never one with a XEP-0334 <no-store/> or <no-permanent-store/> hint;
 *   - then each owner's preferences (XEP-0313 §6): a JID in `never` is never archived, one in `always`
 *     always is, and otherwise the default decides (`roster`: only contacts in the owner's roster).
 */
import { Jid, type XmlElement } from '@service/plugin-api';
import type { RosterApi } from '@service/mod_roster/api';
import { NS_HINTS } from './ns.js';
import type { DefaultMode, Prefs } from './prefs-store.js';

/** The body text of an archivable message, or undefined when the message is not one. */
export function archivableBody(message: XmlElement): string | undefined {
  if (message.name !== 'message') return undefined;
  const type = message.attr('type') ?? 'normal';
  if (type !== 'chat' && type !== 'normal') return undefined;
  return storableBody(message);
}

/** The body text of a groupchat message a room archives, or undefined when it archives none. */
export function archivableGroupchatBody(message: XmlElement): string | undefined {
  if (message.name !== 'message' || message.attr('type') !== 'groupchat') return undefined;
  return storableBody(message);
}

function storableBody(message: XmlElement): string | undefined {
  if (message.getChild('no-store', NS_HINTS) || message.getChild('no-permanent-store', NS_HINTS)) return undefined;
  const body = message.getChild('body');
  return body ? body.text() : undefined;
}

/** Whether a JID of a prefs list names `peer`: a bare entry covers every resource, a full one only itself. */
function listed(list: readonly string[], peer: Jid): boolean {
  return list.some((entry) => entry === peer.bare || entry === peer.full);
}

export async function wantsArchived(owner: Jid, peer: Jid, prefs: Prefs | undefined, fallback: DefaultMode, roster: RosterApi | undefined): Promise<boolean> {
  if (prefs && listed(prefs.never, peer)) return false;
  if (prefs && listed(prefs.always, peer)) return true;
  const mode = prefs?.default ?? fallback;
  if (mode === 'always') return true;
  if (mode === 'never') return false;
  // 'roster' without a running roster module: nobody is in the roster.
  if (!roster) return false;
  const item = await roster.getItem(owner.bare, peer.bare);
  // XEP-0313 §6: contacts in the roster, whatever the subscription; a stored request alone is not one.
  return item !== undefined && item.inRoster;
}
