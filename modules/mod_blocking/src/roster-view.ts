/**
 * The part of mod_roster's api used here (an optional dependency): who receives the account's presence.
 * Checked at runtime, since mod_roster may be absent or of another shape.
 */
import type { Jid } from '@service/plugin-api';

export interface PresenceSubscribers {
  /** Contacts with subscription 'from' or 'both' in the owner's roster (bare JIDs). */
  subscribers(owner: Jid): Promise<Jid[]>;
}

export function asPresenceSubscribers(api: unknown): PresenceSubscribers | undefined {
  if (typeof api !== 'object' || api === null) return undefined;
  const candidate = api as { subscribers?: unknown };
  return typeof candidate.subscribers === 'function' ? (api as PresenceSubscribers) : undefined;
}
