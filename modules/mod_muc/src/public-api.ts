/**
 * What other modules import of mod_muc (`@service/mod_muc/api`): the MUC service's reference and types.
 * No code of the module itself: a consumer gets the running service through `ctx.use(mucService)` (mod_muc_admin)
 * or `ctx.find(mucService)` (mod_admin_extra's send_message, which works without group chat too).
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

export const mucService = createServiceRef<MucApi>({ id: 'mod_muc.muc', provider: 'mod_muc' });
