/** The roster service's implementation (RosterApi in types.ts): rosters for the modules that consume it. */
import { Jid, type DbKind } from '@service/plugin-api';
import { removeItem } from './removal.js';
import type { Roster } from './roster.js';
import { mergedRoster, visibleItem, visibleVersion } from './shared.js';
import { NO_SUBSCRIPTION, flagsOf, pendingOf, subscriptionOf, type Flags } from './state.js';
import type { ScanKey, StoredItem } from './store.js';
import { RosterError, type AccountRef, type RosterApi, type RosterItem, type Subscription } from './types.js';
import { checkContact, checkGroups, checkNick } from './validation.js';

/** Rows per database round trip of `scan`. */
const SCAN_PAGE = 1000;

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

export function rosterApi(roster: Roster, dbKind: DbKind): RosterApi {
  const { store } = roster;
  return {
    dbKind,
    async getRoster(ownerRef, options) {
      const owner = accountOf(ownerRef);
      const shared = await roster.shared.of(owner);
      return mergedRoster(await store.items(owner, options?.includeRequests ?? false), shared).map(publicItem);
    },
    async getItem(ownerRef, contactRef) {
      const owner = accountOf(ownerRef);
      const contact = contactOf(contactRef).bare;
      const item = visibleItem(contact, await store.item(owner, contact), await roster.shared.one(owner, contact));
      return item && publicItem(item);
    },
    async countItems(ownerRef) {
      const owner = accountOf(ownerRef);
      const shared = await roster.shared.of(owner);
      return shared.size ? mergedRoster(await store.items(owner), shared).length : store.count(owner);
    },
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
    checkItem(ownerRef, update) {
      checkContact(accountOf(ownerRef), update.jid);
      checkNick(update.nick);
      if (update.groups) checkGroups(update.groups);
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
    // Shared contacts are subscribed both ways: they receive the owner's presence and the owner theirs.
    subscribers: async (ownerRef) => {
      const owner = accountOf(ownerRef);
      return parseAll(withShared(await store.contactsWith(owner, ['from', 'both']), await roster.shared.of(owner)));
    },
    subscriptions: async (ownerRef) => {
      const owner = accountOf(ownerRef);
      return parseAll(withShared(await store.contactsWith(owner, ['to', 'both']), await roster.shared.of(owner)));
    },
    version: async (ownerRef) => {
      if (!roster.versioning) return undefined;
      const owner = accountOf(ownerRef);
      return visibleVersion(await store.version(owner), await roster.shared.of(owner));
    },
    onSubscriptionChange: (listener) => roster.onSubscriptionChange(listener),
    async *scan(options) {
      let after: ScanKey | undefined;
      for (;;) {
        const page = await store.scanPage(after, SCAN_PAGE, options?.subscriptions);
        for (const { host, username, item } of page) {
          yield {
            owner: `${username}@${host}`,
            contact: item.contact,
            subscription: subscriptionOf(item.flags),
            pendingOut: item.flags.pendingOut,
            pendingIn: item.flags.pendingIn,
            inRoster: item.inRoster,
          };
        }
        if (page.length < SCAN_PAGE) return;
        after = page[page.length - 1]!;
      }
    },
    maxRosterSize: () => roster.maxRosterSize,
    async storedItems(ownerRef, contacts) {
      const owner = accountOf(ownerRef);
      if (contacts === undefined) return (await store.items(owner)).map(publicItem);
      const out: RosterItem[] = [];
      for (const contact of contacts) {
        const item = await store.item(owner, contactOf(contact).bare);
        if (item?.inRoster) out.push(publicItem(item));
      }
      return out;
    },
    storedCount: (owner) => store.count(accountOf(owner)),
    provideSharedContacts: (provider) => roster.shared.add(provider),
    sharedContactsChanged: (owner, changes, options) => roster.sharedChanged(accountOf(owner), changes, options?.presence ?? true),
  };
}

function withShared(stored: readonly string[], shared: ReadonlyMap<string, unknown>): string[] {
  return shared.size ? [...new Set([...stored, ...shared.keys()])] : [...stored];
}
