/**
 * Removing contacts: one item (a roster set with subscription='remove', RFC 6121 §2.5.2, or the API), or
 * a whole account (remove_user). The contact is told with unsubscribe (the owner no longer wants its
 * presence, or withdraws the request) and unsubscribed (it no longer gets the owner's, or its request is
 * denied), so that its roster follows.
 */
import { Jid } from '@service/plugin-api';
import type { Roster } from './roster.js';
import type { StoredItem } from './store.js';
import { RosterError, type SubscriptionCause, type SubscriptionChange } from './types.js';

export interface RemoveOptions {
  readonly cancelSubscriptions: boolean;
  /** Only an item of the roster (a roster set); otherwise a stored request may be removed too. */
  readonly requireInRoster: boolean;
  readonly cause: SubscriptionCause;
  readonly direction: SubscriptionChange['direction'];
}

/** Removes an item and pushes the removal; false when there was none. */
export async function removeItem(roster: Roster, owner: Jid, contact: Jid, options: RemoveOptions): Promise<boolean> {
  const { before } = await roster.change(owner, contact.bare, (current) => {
    if (options.requireInRoster && !current?.inRoster) throw new RosterError('item-not-found', `${contact.bare} is not in the roster`);
    return { next: current ? null : undefined, result: undefined };
  });
  if (!before) return false;
  if (options.cancelSubscriptions) await cancelSubscriptions(roster, owner, contact, before);
  await roster.notify(owner, contact, before, undefined, options.cause, options.direction);
  return true;
}

async function cancelSubscriptions(roster: Roster, owner: Jid, contact: Jid, item: StoredItem): Promise<void> {
  if (item.flags.to || item.flags.pendingOut) await roster.sendSubscription('unsubscribe', owner, contact);
  if (item.flags.from || item.flags.pendingIn) await roster.sendSubscription('unsubscribed', owner, contact);
}

/**
 * remove_user: every contact is unsubscribed both ways (their rosters, when local, move to 'none' and are
 * pushed), then the account's rows are deleted.
 */
export async function removeAccountRoster(roster: Roster, owner: Jid): Promise<void> {
  const items = await roster.store.items(owner, true);
  await roster.store.deleteAccount(owner);
  for (const item of items) {
    const contact = Jid.tryParse(item.contact);
    if (!contact) continue;
    await cancelSubscriptions(roster, owner, contact, item);
    await roster.notify(owner, contact, item, undefined, 'account_removed', 'outbound');
  }
}
