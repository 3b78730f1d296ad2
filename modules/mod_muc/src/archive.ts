/**
 * A room's archive as the room sees it (XEP-0313 §5): which rooms archive (the option `mam`, while a
 * module provides mucArchiveService), who may query a room's archive at its JID and whether they see the
 * senders' real JIDs, the history a room loads from its archive, and the archive going with its room.
 * The archive itself (storage, paging, filters) is the provider's; the rules of the room are here.
 */
import { StanzaError, type Jid, type XmlElement } from '@service/plugin-api';
import { seesJids } from './broadcast.js';
import type { MucEnv } from './context.js';
import type { Room } from './room.js';
import type { MucArchiveApi } from './types.js';

/** The archive of a room that archives now; undefined when the room's `mam` is off or no module archives. */
export function archiveOf(env: MucEnv, room: Room): MucArchiveApi | undefined {
  return room.options.mam ? env.archive() : undefined;
}

/**
 * Who may read a room's archive, after ejabberd: anyone the room would let in and who cannot be told
 * apart from a newcomer reading the history. So occupants and service administrators always; never an
 * outcast; in a members-only room its members (affiliated accounts and MUC/Sub subscribers, as they may
 * enter); in a password-protected room only those affiliated with it (others have not shown the
 * password); in an open room anyone, as anyone may join it and read its history.
 */
export function mayReadArchive(env: MucEnv, room: Room, bare: string, occupant: boolean): boolean {
  if (occupant || env.isServiceAdmin(bare, room.host)) return true;
  const affiliation = room.affiliationOf(bare);
  if (affiliation === 'outcast') return false;
  if (room.options.members_only) return room.mayEnterMembersOnly(bare, affiliation);
  if (room.options.password_protected) return affiliation !== 'none';
  return true;
}

/** A MAM IQ to the room's JID: form discovery (get) or a query (set), each answered by the archive. */
export async function archiveIq(env: MucEnv, room: Room, from: Jid, type: 'get' | 'set', payload: XmlElement): Promise<XmlElement> {
  const archive = archiveOf(env, room);
  if (!archive) throw new StanzaError('service-unavailable', 'this room keeps no archive');
  if (type === 'get') return archive.queryForm();
  const occupant = room.occupantBySession(from.full);
  if (!mayReadArchive(env, room, from.bare, occupant !== undefined)) {
    throw new StanzaError('forbidden', 'only occupants and members may query the archive of this room');
  }
  // As in the room: real JIDs in a non-anonymous room, or for a moderator (an owner or admin who is not in
  // the room would be one on entry).
  const affiliation = room.affiliationOf(from.bare);
  const seesRealJids = occupant ? seesJids(env, room, occupant) : !room.options.anonymous || affiliation === 'owner' || affiliation === 'admin' || env.isServiceAdmin(from.bare, room.host);
  return archive.query(room.jid, payload, { jid: from, seesRealJids });
}

/**
 * A room that goes (destroyed, or temporary and empty) takes its archive with it: a later room of the same
 * name is another room, whose occupants must not read this one's conversation. Rows archived after `now`
 * belong to such a later room and stay. A destroyed room's archive goes whatever its `mam` is now (it may
 * have archived before); registry.ts forgets only the archives of archiving rooms that empty, so that
 * the end of every other temporary room costs no statement.
 */
export async function forgetArchive(env: MucEnv, room: Room): Promise<void> {
  const archive = env.archive();
  if (!archive) return;
  try {
    await archive.removeRoom(room.jid, env.now());
  } catch (err) {
    env.logger.warn({ err, room: room.jid.bare }, 'could not remove the archive of a room that went');
  }
}
