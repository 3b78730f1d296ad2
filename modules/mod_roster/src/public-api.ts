/**
 * What other modules import of mod_roster (`@service/mod_roster/api`): the roster service's reference and
 * types, and the rule of who may see an account's presence. No code of the module itself: a consumer gets
 * the running roster through `ctx.use(rosterService)` / `ctx.find(rosterService)`.
 */
import { createServiceRef, type Jid } from '@service/plugin-api';
import type { RosterApi } from './types.js';

export type {
  AccountRef,
  Pending,
  RosterApi,
  RosterEntry,
  RosterItem,
  RosterItemUpdate,
  SharedContact,
  SharedContactChange,
  SharedContactsProvider,
  Subscription,
  SubscriptionCause,
  SubscriptionChange,
  SubscriptionListener,
  SubscriptionState,
} from './types.js';
export { RosterError } from './types.js';

export const rosterService = createServiceRef<RosterApi>({ id: 'mod_roster.roster', provider: 'mod_roster' });

/** Answers whether `requester` may see `owner`'s presence (see maySeePresence). */
export type PresenceAccess = (owner: Jid, requester: Jid) => Promise<boolean>;

/**
 * Whether `requester` may see `owner`'s presence, and so what XEPs guard by it (last activity, XEP-0012 §3;
 * disco of an account, XEP-0030 §8): the account itself, and contacts it has granted a subscription to
 * ('from' or 'both', RFC 6121). Without a roster (mod_roster not running), only the account itself.
 */
export async function maySeePresence(roster: RosterApi | undefined, owner: Jid, requester: Jid): Promise<boolean> {
  if (owner.bare === requester.bare) return true;
  if (!roster) return false;
  const item = await roster.getItem(owner.bare, requester.bare);
  return item?.subscription === 'from' || item?.subscription === 'both';
}
