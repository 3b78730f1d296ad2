/**
 * What other modules import of mod_muc (`@service/mod_muc/api`): the MUC service's reference and types,
 * and the room options' names and text forms (pure functions: mod_muc_admin checks a room's options before
 * the room exists). A consumer gets the running service through `ctx.use(mucService)` (mod_muc_admin) or
 * `ctx.find(mucService)` (mod_admin_extra's send_message, which works without group chat too).
 *
 * `mucArchiveService` goes the other way: mod_muc declares what it needs of a room archive and consumes it
 * when a module provides it (mod_mam does). It is declared here, with the rooms it serves, so that mod_muc
 * depends on no archive module and runs without one.
 */
import { createServiceRef } from '@service/plugin-api';
import type { MucApi, MucArchiveApi } from './types.js';

export type {
  Affiliation,
  AffiliationEntry,
  HistoryEntry,
  MucApi,
  MucArchiveApi,
  MucErrorKind,
  OccupantInfo,
  Role,
  RoomArchiveEntry,
  RoomArchiveReader,
  RoomCreation,
  RoomOptionName,
  RoomOptions,
  RoomSummary,
  SubscriberInfo,
} from './types.js';
export { MUCSUB_NODES, MucError } from './types.js';
export { ROOM_OPTION_NAMES, RoomOptionError, isRoomOptionName, optionText as roomOptionText, parseOptionText as parseRoomOption, unknownOption as unknownRoomOption } from './room-options.js';

export const mucService = createServiceRef<MucApi>({ id: 'mod_muc.muc', provider: 'mod_muc' });

/** The room archive mod_muc uses when one runs (mod_mam provides it). */
export const mucArchiveService = createServiceRef<MucArchiveApi>({ id: 'mod_mam.muc_archive', provider: 'mod_mam' });
