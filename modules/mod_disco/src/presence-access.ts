/**
 * Who may discover an account (XEP-0030 §8): the account itself, and those allowed to see its presence —
 * contacts it has granted a subscription to ('from' or 'both' in its roster). mod_roster is an optional
 * dependency: without it, only the account itself may ask.
 */
import type { Jid } from '@service/kernel';

/**
 * The part of mod_roster's api (RosterApi) used here, declared structurally: this package does not
 * depend on mod_roster's, and the module may be absent.
 */
interface RosterItems {
  getItem(owner: string, contact: string): Promise<{ readonly subscription: string } | undefined>;
}

/** Whether `requester` may see `owner`'s presence; `rosterApi` is mod_roster's api, read at each call. */
export type PresenceAccess = (owner: Jid, requester: Jid) => Promise<boolean>;

export function presenceAccess(rosterApi: () => unknown): PresenceAccess {
  return async (owner, requester) => {
    if (owner.bare === requester.bare) return true;
    const roster = asRosterItems(rosterApi());
    if (!roster) return false;
    const item = await roster.getItem(owner.bare, requester.bare);
    return item?.subscription === 'from' || item?.subscription === 'both';
  };
}

/** mod_roster's api when it runs and has the expected shape (checked at runtime: the dependency is optional). */
function asRosterItems(api: unknown): RosterItems | undefined {
  if (typeof api !== 'object' || api === null) return undefined;
  return typeof (api as Partial<RosterItems>).getItem === 'function' ? (api as RosterItems) : undefined;
}
