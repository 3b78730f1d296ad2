/**
 * Shared contacts: contacts another module puts in rosters without storing them here (mod_shared_roster's
 * groups). The owner sees such a contact subscribed both ways with nothing pending, in the provider's
 * groups (added to the groups the owner gave it when it is also a stored item), and presence flows both
 * ways as if subscribed, because mod_presence reads items and subscribers through the API, which merges
 * them in.
 *
 * Roster versions (XEP-0237) cover them without storing anything: the version a client sees is the stored
 * one, followed by a digest of the shared contacts when there are any. Whatever changes them, also while
 * the owner is offline, changes the version, and a client that cached the old roster gets the new one.
 */
import { createHash } from 'node:crypto';
import type { Jid } from '@service/plugin-api';
import type { StoredItem } from './store.js';
import type { SharedContact, SharedContactsProvider } from './types.js';

const BOTH_WAYS = { to: true, from: true, pendingOut: false, pendingIn: false, approved: false } as const;

export class SharedContacts {
  readonly #providers = new Set<SharedContactsProvider>();

  /** Registers a provider; returns its removal. */
  add(provider: SharedContactsProvider): () => void {
    this.#providers.add(provider);
    return () => {
      this.#providers.delete(provider);
    };
  }

  /** Every shared contact of `owner`, by bare JID, from every provider. */
  async of(owner: Jid): Promise<Map<string, SharedContact>> {
    const out = new Map<string, SharedContact>();
    for (const provider of [...this.#providers]) {
      for (const [jid, contact] of await provider.contactsOf(owner)) {
        if (jid !== owner.bare) out.set(jid, joined(out.get(jid), contact));
      }
    }
    return out;
  }

  /** One shared contact of `owner` (bare JID), or undefined. */
  async one(owner: Jid, contact: string): Promise<SharedContact | undefined> {
    if (!this.#providers.size || contact === owner.bare) return undefined;
    let found: SharedContact | undefined;
    for (const provider of [...this.#providers]) {
      const shared = await provider.contactOf(owner, contact);
      if (shared) found = joined(found, shared);
    }
    return found;
  }
}

function joined(a: SharedContact | undefined, b: SharedContact): SharedContact {
  if (!a) return b;
  return { groups: [...new Set([...a.groups, ...b.groups])].sort(), nick: a.nick ?? b.nick };
}

/**
 * The item as the owner's clients and the API see it: the stored one (undefined when none), or, for a
 * shared contact, subscribed both ways with the stored name and both sets of groups.
 */
export function visibleItem(contact: string, stored: StoredItem | undefined, shared: SharedContact | undefined): StoredItem | undefined {
  if (!shared) return stored;
  const own = stored?.inRoster ? stored : undefined;
  return {
    contact,
    nick: own?.nick ?? shared.nick,
    groups: [...new Set([...(own?.groups ?? []), ...shared.groups])].sort(),
    flags: BOTH_WAYS,
    inRoster: true,
    request: undefined,
  };
}

/** Stored items with the shared contacts merged in, sorted by contact. */
export function mergedRoster(stored: readonly StoredItem[], shared: ReadonlyMap<string, SharedContact>): StoredItem[] {
  if (!shared.size) return [...stored];
  const out: StoredItem[] = [];
  const seen = new Set<string>();
  for (const item of stored) {
    seen.add(item.contact);
    out.push(visibleItem(item.contact, item, shared.get(item.contact))!);
  }
  for (const [contact, contactShared] of shared) if (!seen.has(contact)) out.push(visibleItem(contact, undefined, contactShared)!);
  return out.sort((a, b) => (a.contact < b.contact ? -1 : a.contact > b.contact ? 1 : 0));
}

/** The roster version clients see: the stored version, and a digest of the shared contacts when there are any. */
export function visibleVersion(stored: string, shared: ReadonlyMap<string, SharedContact>): string {
  if (!shared.size) return stored;
  const canonical = [...shared].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([jid, c]) => [jid, c.nick ?? null, [...c.groups].sort()]);
  return `${stored}-${createHash('sha256').update(JSON.stringify(canonical)).digest('hex').slice(0, 16)}`;
}
