/**
 * The presence an occupant's change shows to each receiver (XEP-0045 §7.2, §7.6, §8, §9, §10.9): the
 * occupant's own show/status payload, the muc#user item with its affiliation and role (its real JID only
 * for receivers allowed to see it), actor and reason, and the status codes of the event.
 */
import { x, type XmlElement } from '@service/plugin-api';
import { NS_MUC, NS_MUC_USER } from './ns.js';
import type { Occupant } from './occupants.js';
import type { Affiliation, Role } from './types.js';

export interface PresenceNotice {
  readonly unavailable?: boolean;
  /** Codes every receiver gets (301 ban, 307 kick, 303 nick change, 321, 322, 332…). */
  readonly codes?: readonly number[];
  /** Codes only the occupant itself gets, besides 110 (100, 170, 201, 210). */
  readonly selfCodes?: readonly number[];
  /** The new nick of a 303 nick change. */
  readonly newNick?: string;
  readonly actorNick?: string;
  readonly reason?: string;
  /** A room destruction: <destroy jid?><reason?/></destroy> instead of an item reason. */
  readonly destroy?: { readonly alternate?: string; readonly reason?: string };
  /** The role to show (defaults to the occupant's; 'none' for removals). */
  readonly role?: Role;
  /**
   * The role the occupant had before this change, for a role change: presence_broadcast may hide one of
   * the two roles, and then the others see the occupant arrive or go (broadcast.ts).
   */
  readonly formerRole?: Role;
  /** Whether the others were shown the occupant before this change (presence_broadcast itself changed). */
  readonly wasShown?: boolean;
}

export interface Receiver {
  readonly full: string;
  /** The occupant receiving is the one whose presence this is. */
  readonly self: boolean;
  /** It may see real JIDs (non-anonymous room, or it is a moderator). */
  readonly seesJids: boolean;
}

/** The occupant's payload: what its session last sent, without MUC elements. */
export function presencePayload(source: XmlElement | undefined): XmlElement[] {
  if (!source) return [];
  return source.elements().filter((c) => !(c.ns === NS_MUC || c.ns === NS_MUC_USER) && c.local !== 'error').map((c) => c.clone());
}

export function occupantPresence(
  roomJid: string,
  occupant: Occupant,
  sessionFull: string | undefined,
  affiliation: Affiliation,
  receiver: Receiver,
  notice: PresenceNotice,
): XmlElement {
  const session = sessionFull ? occupant.sessions.get(sessionFull) : [...occupant.sessions.values()].at(-1);
  const presence = x('presence', { from: `${roomJid}/${occupant.nick}`, to: receiver.full, type: notice.unavailable ? 'unavailable' : undefined });
  if (!notice.unavailable) presence.append(...presencePayload(session?.presence));
  else {
    const status = session?.presence.getChild('status');
    if (status && !notice.codes?.length) presence.append(status.clone());
  }
  const item = x('item', {
    affiliation,
    role: notice.role ?? (notice.unavailable ? 'none' : occupant.role),
    jid: receiver.seesJids && session ? session.jid.full : undefined,
    nick: notice.newNick,
  });
  if (notice.actorNick) item.append(x('actor', { nick: notice.actorNick }));
  if (notice.reason && !notice.destroy) item.append(x('reason', {}, notice.reason));
  const mucUser = x('x', { xmlns: NS_MUC_USER }, item);
  if (notice.destroy) {
    mucUser.append(x('destroy', { jid: notice.destroy.alternate }, notice.destroy.reason ? x('reason', {}, notice.destroy.reason) : undefined));
  }
  const codes = [...(notice.codes ?? [])];
  if (receiver.self) codes.push(110, ...(notice.selfCodes ?? []));
  for (const code of [...new Set(codes)].sort((a, b) => a - b)) mucUser.append(x('status', { code }));
  return presence.append(mucUser);
}
