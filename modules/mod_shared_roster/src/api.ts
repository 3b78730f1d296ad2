/**
 * The shared roster service (`sharedRosterService`): one method per srg_* command of mod_admin_extra,
 * taking that command's arguments by their names. Failures are CommandErrors naming what is wrong:
 * `bad_argument` for an invalid value (the argument named), `not_found` for a group, account or displayed
 * group that does not exist, `conflict` for what is already so. A failed call changes nothing.
 *
 * Every change is written to the tables, then to memory, then pushed to the rosters of the accounts
 * online (see propagation.ts); changes run one at a time. Other nodes of a cluster are told, and read the
 * groups again (SHARED_ROSTER_CACHE).
 */
import { badArgument, conflict, notFound, type ServerServices } from '@service/plugin-api';
import { byName, refText, type DisplayedRef, type Group, type GroupRef, type Groups } from './groups.js';
import { SHARED_ROSTER_CACHE } from './members.js';
import type { Propagation } from './propagation.js';
import type { SharedRosterStore } from './store.js';
import { ALL_USERS, ONLINE_USERS, groupName, groupRef, label, servedHost, userName } from './validation.js';

export interface GroupArgs {
  readonly group: string;
  readonly host: string;
}

export interface MemberArgs {
  readonly user: string;
  readonly host: string;
  readonly group: string;
  readonly grouphost: string;
}

export interface GroupInfo {
  readonly label: string;
  readonly description: string;
  /** As srg_get_displayed lists them. */
  readonly displayed: readonly string[];
  readonly allUsers: boolean;
  readonly onlineUsers: boolean;
}

export interface SharedRosterApi {
  /** srg_list: the identifiers of a vhost's groups, sorted. */
  listGroups(args: { readonly host: string }): Promise<string[]>;
  /** srg_create (and srg_add, with everything empty): the displayed groups must exist, but for the group itself. */
  createGroup(args: GroupArgs & { readonly label: string; readonly description: string; readonly display: readonly string[] }): Promise<void>;
  /** srg_delete: also removes the group from the displayed lists of other groups. */
  deleteGroup(args: GroupArgs): Promise<void>;
  groupInfo(args: GroupArgs): Promise<GroupInfo>;
  /** srg_set_info: `key` is label or description. */
  setGroupInfo(args: GroupArgs & { readonly key: string; readonly value: string }): Promise<void>;
  /** srg_get_members: the explicit members' bare JIDs, sorted (@all@ and @online@ are flags: see groupInfo). */
  members(args: GroupArgs): Promise<string[]>;
  /** srg_user_add: `user` is an account of `host`, or @all@ / @online@ (the accounts of `grouphost`). */
  addMember(args: MemberArgs): Promise<void>;
  removeMember(args: MemberArgs): Promise<void>;
  /** srg_get_displayed: `group` for one of the same vhost, `group@vhost` for another, in the order added. */
  displayed(args: GroupArgs): Promise<string[]>;
  addDisplayed(args: GroupArgs & { readonly add: string }): Promise<void>;
  removeDisplayed(args: GroupArgs & { readonly del: string }): Promise<void>;
}

export interface ApiDeps {
  readonly services: ServerServices;
  readonly groups: Groups;
  readonly store: SharedRosterStore;
  readonly propagation: Propagation;
  /** Runs changes one at a time (commands, hooks, logins and logouts that matter). */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
}

export function sharedRosterApi({ services, groups, store, propagation, exclusive }: ApiDeps): SharedRosterApi {
  const existing = (ref: GroupRef): Group => {
    const found = groups.get(ref);
    if (!found) throw notFound(`shared roster group '${ref.name}' does not exist on ${ref.host}`);
    return found;
  };
  const groupOf = (args: GroupArgs) => existing({ host: servedHost(services, args.host, 'host'), name: groupName(args.group, 'group') });
  /** The group srg_user_add and srg_user_del name: `group` on `grouphost`. */
  const memberGroupOf = (args: MemberArgs) => existing({ host: servedHost(services, args.grouphost, 'grouphost'), name: groupName(args.group, 'group') });
  /** A group to display must exist, unless it is the group itself (srg_create may name it before it exists). */
  const checkDisplayable = (ref: GroupRef, from: GroupRef): void => {
    if (ref.host !== from.host || ref.name !== from.name) existing(ref);
  };
  const adminChange = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await exclusive(() => propagation.around(work, { presence: true }));
    } finally {
      // Told even after a failure: the tables may have changed before it.
      await services.caches.changed(SHARED_ROSTER_CACHE);
    }
  };

  return {
    async listGroups({ host }) {
      return groups.list(servedHost(services, host, 'host')).map((g) => g.name);
    },

    async createGroup(args) {
      const host = servedHost(services, args.host, 'host');
      const name = groupName(args.group, 'group');
      const group: Group = {
        host,
        name,
        label: label(args.label, 'label'),
        description: args.description,
        allUsers: false,
        onlineUsers: false,
        displayed: [],
        members: new Set(),
      };
      const refs = args.display.map((text) => groupRef(services, text, host, 'display'));
      const seen = new Set<string>();
      for (const ref of refs) {
        const shown = refText(ref, host);
        if (seen.has(shown)) throw badArgument('display', `argument 'display': the group '${shown}' appears twice`);
        seen.add(shown);
      }
      await adminChange(async () => {
        if (groups.get(group)) throw conflict(`shared roster group '${name}' already exists on ${host}`);
        for (const ref of refs) {
          checkDisplayable(ref, group);
          group.displayed.push({ host: ref.host, name: ref.name, position: group.displayed.length });
        }
        await store.insertGroup(group);
        groups.put(group);
      });
    },

    async deleteGroup(args) {
      await adminChange(async () => {
        const group = groupOf(args);
        await store.deleteGroup(group);
        groups.delete(group);
      });
    },

    async groupInfo(args) {
      const group = groupOf(args);
      return {
        label: group.label,
        description: group.description,
        displayed: group.displayed.map((d) => refText(d, group.host)),
        allUsers: group.allUsers,
        onlineUsers: group.onlineUsers,
      };
    },

    async setGroupInfo(args) {
      if (args.key !== 'label' && args.key !== 'description') {
        throw badArgument('key', `argument 'key': unknown key '${args.key}': the keys that can be set are label and description`);
      }
      const key = args.key;
      const value = key === 'label' ? label(args.value, 'value') : args.value;
      await adminChange(async () => {
        const group = groupOf(args);
        await store.updateGroup(group, { [key]: value });
        group[key] = value;
      });
    },

    async members(args) {
      return [...groupOf(args).members].sort(byName);
    },

    async addMember(args) {
      const member = await memberOf(services, args);
      await adminChange(async () => {
        const group = memberGroupOf(args);
        if (member === ALL_USERS || member === ONLINE_USERS) {
          const flag = member === ALL_USERS ? 'allUsers' : 'onlineUsers';
          if (group[flag]) throw conflict(`${member} is already a member of shared roster group '${group.name}' on ${group.host}`);
          await store.updateGroup(group, flag === 'allUsers' ? { all_users: true } : { online_users: true });
          group[flag] = true;
          return;
        }
        if (group.members.has(member)) throw conflict(`${member} is already a member of shared roster group '${group.name}' on ${group.host}`);
        await store.addMember(group, member);
        groups.addMember(group, member);
      });
    },

    async removeMember(args) {
      const member = await memberOf(services, args);
      await adminChange(async () => {
        const group = memberGroupOf(args);
        if (member === ALL_USERS || member === ONLINE_USERS) {
          const flag = member === ALL_USERS ? 'allUsers' : 'onlineUsers';
          if (!group[flag]) throw notFound(`${member} is not a member of shared roster group '${group.name}' on ${group.host}`);
          await store.updateGroup(group, flag === 'allUsers' ? { all_users: false } : { online_users: false });
          group[flag] = false;
          return;
        }
        if (!group.members.has(member)) throw notFound(`${member} is not a member of shared roster group '${group.name}' on ${group.host}`);
        await store.removeMember(group, member);
        groups.removeMember(group, member);
      });
    },

    async displayed(args) {
      const group = groupOf(args);
      return group.displayed.map((d) => refText(d, group.host));
    },

    async addDisplayed(args) {
      await adminChange(async () => {
        const group = groupOf(args);
        const ref = groupRef(services, args.add, group.host, 'add');
        checkDisplayable(ref, group);
        if (group.displayed.some((d) => d.host === ref.host && d.name === ref.name)) {
          throw conflict(`shared roster group '${group.name}' on ${group.host} already displays '${refText(ref, group.host)}'`);
        }
        const shown: DisplayedRef = { ...ref, position: Math.max(-1, ...group.displayed.map((d) => d.position)) + 1 };
        await store.addDisplayed(group, shown);
        group.displayed = [...group.displayed, shown];
      });
    },

    async removeDisplayed(args) {
      await adminChange(async () => {
        const group = groupOf(args);
        const ref = groupRef(services, args.del, group.host, 'del');
        if (!group.displayed.some((d) => d.host === ref.host && d.name === ref.name)) {
          throw notFound(`shared roster group '${group.name}' on ${group.host} does not display '${refText(ref, group.host)}'`);
        }
        await store.removeDisplayed(group, ref);
        group.displayed = group.displayed.filter((d) => d.host !== ref.host || d.name !== ref.name);
      });
    },
  };
}

/** The member srg_user_add and srg_user_del name: @all@, @online@, or an existing account's bare JID. */
async function memberOf(services: ServerServices, args: MemberArgs): Promise<string> {
  servedHost(services, args.grouphost, 'grouphost');
  if (args.user === ALL_USERS || args.user === ONLINE_USERS) {
    // They stand for the accounts of the group's vhost; `host` is still checked, as for any member.
    servedHost(services, args.host, 'host');
    return args.user;
  }
  const user = userName(args.user, 'user');
  const host = servedHost(services, args.host, 'host');
  if (!(await services.accounts.exists(user, host))) throw notFound(`account ${user}@${host} does not exist`);
  return `${user}@${host}`;
}
