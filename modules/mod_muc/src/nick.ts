/**
 * Room nicknames as XEP-0045 §7.2.9 and RFC 7700 (PRECIS Nickname) want them: the service enforces a nick
 * (spaces of any kind become one U+0020, none at either end, NFKC) and compares nicks by their prepared,
 * case-folded form, so that "Alice" and "alice" cannot be two occupants. A nick already canonical is kept
 * as the user asked; when enforcement changes it, the join or nick change says so with status 210.
 */
import { Jid } from '@service/plugin-api';

/**
 * The nick the service uses for `requested`, or undefined when it cannot be one (empty once its spaces
 * are trimmed, or no valid resource of a room JID).
 */
export function enforceNick(requested: string): string | undefined {
  // RFC 7700 §2.2: additional mapping (any space to U+0020, trimmed, runs collapsed), then NFKC.
  const mapped = requested.replace(/\p{Zs}/gu, ' ').trim().replace(/ {2,}/g, ' ').normalize('NFKC');
  if (mapped === '') return undefined;
  // It must stay a resource of the room's JID: resourceprep refuses what XMPP addresses refuse.
  return Jid.tryParse(`room@example.org/${mapped}`)?.resource;
}

/** The form two nicks are compared in (RFC 7700 §2.4: enforced, then case-folded). */
export function nickKey(nick: string): string {
  // Remembered, bounded: a join compares the new nick with every occupant's.
  let key = keys.get(nick);
  if (key === undefined) {
    key = (enforceNick(nick) ?? nick).toLowerCase();
    if (keys.size >= MAX_KEYS) keys.clear();
    keys.set(nick, key);
  }
  return key;
}

const MAX_KEYS = 10_000;
const keys = new Map<string, string>();

/** The nick part of a stanza's raw 'to' (room@service/nick), as the client wrote it. */
export function requestedNick(to: string | undefined): string | undefined {
  if (to === undefined) return undefined;
  const slash = to.indexOf('/');
  return slash === -1 ? undefined : to.slice(slash + 1);
}
