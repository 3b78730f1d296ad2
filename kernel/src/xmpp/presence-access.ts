/**
 * Who may see an account's presence, and so what XEPs guard by it (last activity, XEP-0012 §3; disco of an
 * account, XEP-0030 §8): the account itself, and contacts it has granted a subscription to ('from' or 'both'
 * in its roster, RFC 6121). The roster is mod_roster's, an optional dependency of the modules that ask:
 * without it, only the account itself may.
 */
import type { Jid } from './jid.js';

/**
 * The part of mod_roster's api (RosterApi) used here, declared structurally: the kernel does not depend on
 * mod_roster, and the module may be absent.
 */
interface RosterItems {
  getItem(owner: string, contact: string): Promise<{ readonly subscription: string } | undefined>;
}

export type PresenceAccess = (owner: Jid, requester: Jid) => Promise<boolean>;

/** `rosterApi` gives mod_roster's api (or undefined), read at each call: the module may start or stop. */
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
