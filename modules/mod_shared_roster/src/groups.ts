/**
 * The groups, held in memory (loaded from the tables at start, changed only after the tables are), so
 * that the questions asked on every roster get, presence broadcast and probe are answered without a query.
 *
 * ejabberd's semantics: an account belongs to the groups that list it, and to every group of its own vhost
 * whose members are `@all@` or `@online@`; it sees, subscribed both ways, the members of the groups that
 * those groups display. A displayed group of another vhost is written `group@vhost`.
 */
import type { Jid } from '@service/plugin-api';

/** A group as its displayed list names it. */
export interface GroupRef {
  readonly host: string;
  readonly name: string;
}

export interface DisplayedRef extends GroupRef {
  /** Keeps the order in which groups were added to the list. */
  readonly position: number;
}

export interface Group extends GroupRef {
  label: string;
  description: string;
  /** `@all@`: every account of the group's vhost is a member. */
  allUsers: boolean;
  /** `@online@`: every account of the group's vhost with an available session is a member. */
  onlineUsers: boolean;
  /** The groups whose members this group's members see, in the order they were added. */
  displayed: DisplayedRef[];
  /** Explicit members, bare JIDs. */
  readonly members: Set<string>;
}

/** How a group's displayed list shows a reference: the name on the group's own vhost, `name@vhost` elsewhere. */
export function refText(ref: GroupRef, from: string): string {
  return ref.host === from ? ref.name : `${ref.name}@${ref.host}`;
}

/** The roster group name members see: the label, or the identifier when there is none. */
export function labelOf(group: Group): string {
  return group.label || group.name;
}

/** Byte order for ASCII, code-unit order beyond: stable and independent of locales. */
export function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class Groups {
  /** host → name → group. */
  readonly #byHost = new Map<string, Map<string, Group>>();
  /** bare JID → the groups that list it explicitly. */
  readonly #memberOf = new Map<string, Set<Group>>();

  get(ref: GroupRef): Group | undefined {
    return this.#byHost.get(ref.host)?.get(ref.name);
  }

  /** The groups of a vhost, sorted by identifier. */
  list(host: string): Group[] {
    return [...(this.#byHost.get(host)?.values() ?? [])].sort((a, b) => byName(a.name, b.name));
  }

  *all(): IterableIterator<Group> {
    for (const groups of this.#byHost.values()) yield* groups.values();
  }

  clear(): void {
    this.#byHost.clear();
    this.#memberOf.clear();
  }

  put(group: Group): void {
    let groups = this.#byHost.get(group.host);
    if (!groups) this.#byHost.set(group.host, (groups = new Map()));
    groups.set(group.name, group);
    for (const member of group.members) this.#index(member).add(group);
  }

  /** Forgets a group, and removes it from the lists of the groups that displayed it. */
  delete(group: Group): void {
    this.#byHost.get(group.host)?.delete(group.name);
    for (const member of group.members) this.#unindex(member, group);
    for (const other of this.all()) other.displayed = other.displayed.filter((d) => d.host !== group.host || d.name !== group.name);
  }

  addMember(group: Group, bare: string): void {
    group.members.add(bare);
    this.#index(bare).add(group);
  }

  removeMember(group: Group, bare: string): void {
    group.members.delete(bare);
    this.#unindex(bare, group);
  }

  /** Removes an account from every group that lists it; returns those groups. */
  removeAccount(bare: string): Group[] {
    const groups = [...(this.#memberOf.get(bare) ?? [])];
    for (const group of groups) this.removeMember(group, bare);
    return groups;
  }

  /** The groups an account belongs to: those that list it, and those of its vhost with @all@ or @online@. */
  groupsOf(account: Jid): Group[] {
    const out = new Set(this.#memberOf.get(account.bare) ?? []);
    for (const group of this.#byHost.get(account.host)?.values() ?? []) if (group.allUsers || group.onlineUsers) out.add(group);
    return [...out];
  }

  /** The groups whose members an account sees: those its groups display. */
  displayedTo(account: Jid): Group[] {
    const out = new Set<Group>();
    for (const group of this.groupsOf(account)) {
      for (const ref of group.displayed) {
        const shown = this.get(ref);
        if (shown) out.add(shown);
      }
    }
    return [...out];
  }

  /** Whether a vhost has a group whose members are @online@ (then logins and logouts change rosters). */
  hasOnlineGroups(host: string): boolean {
    for (const group of this.#byHost.get(host)?.values() ?? []) if (group.onlineUsers) return true;
    return false;
  }

  /** Whether a vhost has a group whose members are @all@ (then registrations and removals change rosters). */
  hasAllUsersGroups(host: string): boolean {
    for (const group of this.#byHost.get(host)?.values() ?? []) if (group.allUsers) return true;
    return false;
  }

  #index(bare: string): Set<Group> {
    let groups = this.#memberOf.get(bare);
    if (!groups) this.#memberOf.set(bare, (groups = new Set()));
    return groups;
  }

  #unindex(bare: string, group: Group): void {
    const groups = this.#memberOf.get(bare);
    groups?.delete(group);
    if (groups?.size === 0) this.#memberOf.delete(bare);
  }
}
