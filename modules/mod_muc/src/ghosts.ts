/**
 * Occupants whose client answers the room with errors (XEP-0045's ghost users; its section on the service
 * removing a user because of an error, anchor #service-error-kick): a message or presence the room sent
 * bounced back from the occupant's full JID means the session is gone or broken, so the room removes it,
 * as ejabberd's mod_muc_room does, and says why with status 333 (removed because of a technical problem)
 * to the removed session and to the others, without 307, since no moderator kicked anyone.
 *
 * Which errors remove, as in ejabberd: any error message to the room's bare JID and any error presence
 * (to the room or to an occupant JID) from an occupant session; an error message to an occupant JID (the
 * bounce of a groupchat or private message, which the room sends from the sender's occupant JID) only
 * when its condition says the recipient is not there (ejabberd's check_error_kick list). A temporary
 * condition (resource-constraint, policy-violation, …) leaves the occupant in, and the error is dropped.
 */
import type { Jid, XmlElement } from '@service/plugin-api';
import { removeOccupant } from './actions.js';
import { shownAffiliation } from './broadcast.js';
import type { MucEnv } from './context.js';
import { occupantPresence } from './presence.js';
import type { Room } from './room.js';

/** XEP-0045's status code for a removal because of a technical problem. */
export const STATUS_TECHNICAL_REMOVAL = 333;

const NS_STANZAS = 'urn:ietf:params:xml:ns:xmpp-stanzas';

/** The conditions that say the recipient is gone (ejabberd's check_error_kick). */
const GONE_CONDITIONS: ReadonlySet<string> = new Set([
  'gone',
  'internal-server-error',
  'item-not-found',
  'jid-malformed',
  'recipient-unavailable',
  'redirect',
  'remote-server-not-found',
  'remote-server-timeout',
  'service-unavailable',
]);

/** The defined condition of an error stanza, if it names one. */
export function errorCondition(stanza: XmlElement): string | undefined {
  return stanza.getChild('error')?.elements().find((c) => c.ns === NS_STANZAS && c.local !== 'text')?.local;
}

/**
 * An error stanza from `from` to the room (`toOccupant`: to an occupant JID). Removes the session when
 * it is an occupant's and the error is one that removes; resolves true when it did.
 */
export async function handleErrorFromOccupant(env: MucEnv, room: Room, stanza: XmlElement, from: Jid, toOccupant: boolean): Promise<boolean> {
  const occupant = room.occupantBySession(from.full);
  if (!occupant) return false;
  const condition = errorCondition(stanza);
  if (stanza.name === 'message' && toOccupant && (condition === undefined || !GONE_CONDITIONS.has(condition))) return false;
  const reason = `removed because of a technical problem: the client answered with an error (${condition ?? 'undefined-condition'})`;
  if (occupant.sessions.size > 1) {
    // Another session keeps the nick: only the broken one is told it is out.
    const self = occupantPresence(room.jid.bare, occupant, from.full, shownAffiliation(env, room, occupant.bare), { full: from.full, self: true, seesJids: true }, { unavailable: true, codes: [STATUS_TECHNICAL_REMOVAL], reason });
    occupant.sessions.delete(from.full);
    await env.send(self);
    return true;
  }
  await removeOccupant(env, room, occupant, { codes: [STATUS_TECHNICAL_REMOVAL], reason });
  return true;
}

