/**
 * What each account sees of the groups: the shared contacts mod_roster merges into its roster (it is
 * registered there as a SharedContactsProvider). A contact is shared with an owner when it is a member of
 * a group displayed to one of the owner's groups; its roster groups are the labels of those groups.
 */
import type { Jid } from '@service/plugin-api';
import type { SharedContact, SharedContactsProvider } from '@service/mod_roster/api';
import { labelOf, type Group, type Groups } from './groups.js';
import type { HostAccounts, OnlineAccounts } from './members.js';

/** For the snapshot taken around an account's creation or removal: whether it counts as registered. */
export interface Assumption {
  readonly bare: string;
  readonly registered: boolean;
}

export class SharedView implements SharedContactsProvider {
  constructor(
    private readonly groups: Groups,
    private readonly accounts: HostAccounts,
    private readonly online: OnlineAccounts,
  ) {}

  async contactsOf(owner: Jid): Promise<Map<string, SharedContact>> {
    const labels = new Map<string, Set<string>>();
    for (const group of this.groups.displayedTo(owner)) {
      const label = labelOf(group);
      for (const member of await this.membersOf(group)) {
        if (member === owner.bare) continue;
        let set = labels.get(member);
        if (!set) labels.set(member, (set = new Set()));
        set.add(label);
      }
    }
    return new Map([...labels].map(([member, set]) => [member, { groups: [...set].sort() }]));
  }

  contactOf(owner: Jid, contact: string): Promise<SharedContact | undefined> {
    return this.contactAssuming(owner, contact, undefined);
  }

  /** `contactOf`, with `assume` deciding whether one account counts as registered (see Assumption). */
  async contactAssuming(owner: Jid, contact: string, assume: Assumption | undefined): Promise<SharedContact | undefined> {
    if (contact === owner.bare) return undefined;
    const labels = new Set<string>();
    for (const group of this.groups.displayedTo(owner)) if (await this.isMember(group, contact, assume)) labels.add(labelOf(group));
    return labels.size ? { groups: [...labels].sort() } : undefined;
  }

  /** Everyone a group stands for: its explicit members, and the accounts @all@ or @online@ bring. */
  async membersOf(group: Group): Promise<Set<string>> {
    const out = new Set(group.members);
    if (group.allUsers) for (const bare of await this.accounts.of(group.host)) out.add(bare);
    if (group.onlineUsers) for (const bare of this.online.onHost(group.host)) out.add(bare);
    return out;
  }

  async isMember(group: Group, bare: string, assume?: Assumption): Promise<boolean> {
    if (group.members.has(bare)) return true;
    if (!bare.endsWith(`@${group.host}`)) return false;
    if (group.onlineUsers && this.online.has(bare)) return true;
    if (!group.allUsers) return false;
    if (assume?.bare === bare) return assume.registered;
    return (await this.accounts.of(group.host)).has(bare);
  }
}
