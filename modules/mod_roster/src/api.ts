/** The module's `api`: rosters for mod_presence and the admin commands (see RosterApi in types.ts). */
import { Jid } from '@service/kernel';
import { removeItem } from './removal.js';
import type { Roster } from './roster.js';
import { NO_SUBSCRIPTION, flagsOf, pendingOf, subscriptionOf, type Flags } from './state.js';
import type { StoredItem } from './store.js';
import { RosterError, type AccountRef, type RosterApi, type RosterItem, type Subscription } from './types.js';
import { checkContact, checkGroups, checkNick } from './validation.js';

export function publicItem(item: StoredItem): RosterItem {
  return {
    jid: item.contact,
    nick: item.nick,
    groups: [...item.groups],
    subscription: subscriptionOf(item.flags),
    pendingOut: item.flags.pendingOut,
    pendingIn: item.flags.pendingIn,
    pending: pendingOf(item.flags),
    approved: item.flags.approved,
    inRoster: item.inRoster,
  };
}

/** A local account's bare JID; RosterError for anything else. */
function accountOf(ref: AccountRef): Jid {
  const jid = typeof ref === 'string' ? Jid.tryParse(ref) : ref;
  if (!jid || jid.user === undefined) throw new RosterError('bad-request', `'${String(ref)}' is not an account`);
  return jid.toBare();
}

function contactOf(ref: Jid | string): Jid {
  const jid = typeof ref === 'string' ? Jid.tryParse(ref) : ref;
  if (!jid) throw new RosterError('jid-malformed', `'${String(ref)}' is not a valid JID`);
  return jid.toBare();
}

/** An administrator's subscription: set as given; requests it answers are no longer pending. */
function withSubscription(flags: Flags, subscription: Subscription | undefined): Flags {
  if (subscription === undefined) return flags;
  const granted = flagsOf(subscription);
  return {
    ...granted,
    pendingOut: flags.pendingOut && !granted.to,
    pendingIn: flags.pendingIn && !granted.from,
    approved: flags.approved && !granted.from,
  };
}

function parseAll(jids: readonly string[]): Jid[] {
  return jids.map((j) => Jid.tryParse(j)).filter((j): j is Jid => j !== undefined);
}

export function rosterApi(roster: Roster): RosterApi {
  const { store } = roster;
  return {
    async getRoster(owner, options) {
      return (await store.items(accountOf(owner), options?.includeRequests ?? false)).map(publicItem);
    },
    async getItem(owner, contact) {
      const item = await store.item(accountOf(owner), contactOf(contact).bare);
      return item && publicItem(item);
    },
    countItems: (owner) => store.count(accountOf(owner)),
    async setItem(ownerRef, update) {
      const owner = accountOf(ownerRef);
      const contact = checkContact(owner, update.jid);
      const nick = checkNick(update.nick);
      const groups = update.groups && checkGroups(update.groups);
      const { before, after } = await roster.change(owner, contact.bare, async (current, trx) => {
        await roster.ensureRoom(trx, owner, current);
        const flags = withSubscription(current?.flags ?? NO_SUBSCRIPTION, update.subscription);
        const next: StoredItem = {
          contact: contact.bare,
          nick: update.nick === undefined ? current?.nick : nick,
          groups: groups ?? current?.groups ?? [],
          flags,
          inRoster: true,
          request: flags.pendingIn ? current?.request : undefined,
        };
        return { next, result: undefined };
      });
      await roster.notify(owner, contact, before, after, 'admin', 'admin');
      return publicItem(after!);
    },
    async deleteItem(owner, contact, options) {
      const cancel = options?.cancelSubscriptions ?? false;
      return removeItem(roster, accountOf(owner), contactOf(contact), {
        cancelSubscriptions: cancel,
        requireInRoster: false,
        cause: cancel ? 'roster_remove' : 'admin',
        direction: 'admin',
      });
    },
    subscribers: async (owner) => parseAll(await store.contactsWith(accountOf(owner), ['from', 'both'])),
    subscriptions: async (owner) => parseAll(await store.contactsWith(accountOf(owner), ['to', 'both'])),
    version: async (owner) => (roster.versioning ? store.version(accountOf(owner)) : undefined),
    onSubscriptionChange: (listener) => roster.onSubscriptionChange(listener),
  };
}
