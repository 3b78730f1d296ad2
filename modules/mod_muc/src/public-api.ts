/**
 * What other modules import of mod_muc (`@service/mod_muc/api`): the MUC service's reference and types,
 * and the room options' names and text forms (pure functions: mod_muc_admin checks a room's options before
 * the room exists). A consumer gets the running service through `ctx.use(mucService)` (mod_muc_admin) or
 * `ctx.find(mucService)` (mod_admin_extra's send_message, which works without group chat too).
 */
import { createServiceRef } from '@service/plugin-api';
import type { MucApi } from './types.js';

export type {
  Affiliation,
  AffiliationEntry,
  HistoryEntry,
  MucApi,
  MucErrorKind,
  OccupantInfo,
  Role,
  RoomCreation,
  RoomOptionName,
  RoomOptions,
  RoomSummary,
  SubscriberInfo,
} from './types.js';
export { MUCSUB_NODES, MucError } from './types.js';
export { ROOM_OPTION_NAMES, RoomOptionError, isRoomOptionName, optionText as roomOptionText, parseOptionText as parseRoomOption, unknownOption as unknownRoomOption } from './room-options.js';

export const mucService = createServiceRef<MucApi>({ id: 'mod_muc.muc', provider: 'mod_muc' });
