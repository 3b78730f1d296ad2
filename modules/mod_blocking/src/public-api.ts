/**
 * What other modules import of mod_blocking (`@service/mod_blocking/api`): the blocking service's
 * reference and type, no code of the module. A module that blocks or checks JIDs for an account as its
 * clients would consumes it (`ctx.find(blockingService)`).
 */
import { createServiceRef } from '@service/plugin-api';

export interface BlockingApi {
  /** The account's blocked JIDs, sorted. */
  blocklist(user: string, host: string): Promise<string[]>;
  /** Blocks JIDs as a client of the account would (pushes, presence); a bad_argument error for an invalid JID. */
  block(user: string, host: string, jids: readonly string[]): Promise<void>;
  /** Unblocks JIDs, or every JID when `jids` is omitted. */
  unblock(user: string, host: string, jids?: readonly string[]): Promise<void>;
  /** Whether `other` is covered by the account's blocklist (XEP-0191 §6 matching). */
  isBlocked(user: string, host: string, other: string): Promise<boolean>;
}

export const blockingService = createServiceRef<BlockingApi>({ id: 'mod_blocking.blocking', provider: 'mod_blocking' });
