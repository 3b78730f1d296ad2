/**
 * Shared roster groups (srg_*), through mod_shared_roster: what these change, members' clients see at
 * once as roster pushes (and presence), and at their next roster get otherwise.
 */
import { defineCommand, type HandlersFor } from '@service/plugin-api';
import { sharedRosterService } from '@service/mod_shared_roster/api';
import { need, type AdminContext } from '../context.js';

const group = { name: 'group', type: 'string', desc: 'Group identifier', example: 'group3' } as const;
const groupHost = { name: 'host', type: 'string', desc: 'Group server name', example: 'myserver.com' } as const;
const label = { name: 'label', type: 'string', desc: 'Group name: the roster group members see (the identifier when empty)', example: 'Group3' } as const;
const description = { name: 'description', type: 'string', desc: 'Group description', example: 'Third group' } as const;

const NO_GROUP = 'Fails with 404 when the group does not exist, with 400 when the host is not served here or the identifier is not one (empty, longer than 191 characters, or with an @).';
const ROSTERS = "Members' clients online get roster pushes at once, and presence starts or stops flowing between the contacts that come or go.";
const DISPLAY =
  'A displayed group is named by its identifier when it is on the same host, `group@vhost` when it is on another; it must exist.';

/** srg_user_add and srg_user_del take the same arguments and answer the same way. */
const MEMBER_CHANGE = {
  args: [
    { name: 'user', type: 'string', desc: 'Username, or @all@ or @online@', example: 'user1' },
    { name: 'host', type: 'string', desc: 'User server name', example: 'myserver.com' },
    group,
    { name: 'grouphost', type: 'string', desc: 'Group server name', example: 'myserver.com' },
  ],
  result: { name: 'res', type: 'rescode' },
  examples: [{ args: { user: 'user1', host: 'myserver.com', group: 'group3', grouphost: 'myserver.com' }, result: 0 }],
} as const;

export const sharedRosterCommands = [
  defineCommand({
    name: 'srg_create',
    tags: ['shared_roster_group'],
    desc: 'Create a Shared Roster Group',
    longdesc:
      'API version 0: the displayed groups as one string, separated by `\\n` (before 24.02). Otherwise as version 1.',
    version: 0,
    args: [group, groupHost, label, description, { name: 'display', type: 'string', desc: 'Groups to display, separated by \\n', example: 'group1\\ngroup2' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { group: 'group3', host: 'myserver.com', label: 'Group3', description: 'Third group', display: 'group1\\ngroup2' }, result: 0 }],
  }),
  defineCommand({
    name: 'srg_create',
    tags: ['shared_roster_group', 'v1'],
    desc: 'Create a Shared Roster Group',
    longdesc:
      'Creates the group with its label, description and displayed groups, and no members. The members of the group see, in their rosters, ' +
      'the members of the displayed groups, subscribed both ways, in a roster group named after each displayed group\'s label. ' +
      `A group usually displays itself, so that its members see each other: it may name itself in \`display\` before it exists. ${DISPLAY} ` +
      `Fails with 409 when the group exists, with 404 when a displayed group does not exist, with 400 when the host is not served here, the identifier is not one ` +
      '(empty, longer than 191 characters, or with an @), the label is longer than 191 characters, or a displayed group is named twice; nothing is created then.',
    note: 'updated in 24.02',
    version: 1,
    args: [group, groupHost, label, description, { name: 'display', type: { list: 'string', item: 'group' }, desc: 'List of groups to display', example: ['group1', 'group2'] }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { group: 'group3', host: 'myserver.com', label: 'Group3', description: 'Third group', display: ['group1', 'group2'] }, result: 0 }],
  }),
  defineCommand({
    name: 'srg_add',
    tags: ['shared_roster_group'],
    desc: 'Add/Create a Shared Roster Group (without details)',
    longdesc: `Creates the group with an empty label (members see its identifier), no description, no displayed groups and no members. Fails with 409 when the group exists, with 400 when the host is not served here or the identifier is not one.`,
    note: 'added in 24.06',
    args: [group, groupHost],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { group: 'group3', host: 'myserver.com' }, result: 0 }],
  }),
  defineCommand({
    name: 'srg_delete',
    tags: ['shared_roster_group'],
    desc: 'Delete a Shared Roster Group',
    longdesc: `Deletes the group, its memberships, and its place in the displayed groups of other groups. ${ROSTERS} ${NO_GROUP}`,
    args: [group, groupHost],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { group: 'group3', host: 'myserver.com' }, result: 0 }],
  }),
  defineCommand({
    name: 'srg_list',
    tags: ['shared_roster_group'],
    desc: 'List the Shared Roster Groups in Host',
    longdesc: 'The identifiers of the groups of a host, sorted. Fails with 400 when the host is not served here.',
    args: [{ name: 'host', type: 'string', desc: 'Server name', example: 'myserver.com' }],
    result: { name: 'groups', type: { list: 'string', item: 'id' }, desc: 'List of group identifiers' },
    examples: [{ args: { host: 'myserver.com' }, result: ['group1', 'group2'] }],
  }),
  defineCommand({
    name: 'srg_get_info',
    tags: ['shared_roster_group'],
    desc: 'Get info of a Shared Roster Group',
    longdesc:
      'The keys, always in this order: `label`, `description`, `displayed_groups` (the displayed groups as srg_get_displayed lists them, separated by `, `), ' +
      `\`all_users\` and \`online_users\` (\`true\` when @all@ or @online@ is a member, else \`false\`). ${NO_GROUP}`,
    args: [group, groupHost],
    result: {
      name: 'informations',
      type: { list: { object: [{ name: 'key', type: 'string' }, { name: 'value', type: 'string' }] }, item: 'information' },
      desc: 'List of group information, as key and value',
    },
    examples: [
      {
        args: { group: 'group3', host: 'myserver.com' },
        result: [
          { key: 'label', value: 'Group 3' },
          { key: 'description', value: 'Third group' },
          { key: 'displayed_groups', value: 'group1, group3' },
          { key: 'all_users', value: 'false' },
          { key: 'online_users', value: 'false' },
        ],
      },
    ],
  }),
  defineCommand({
    name: 'srg_set_info',
    tags: ['shared_roster_group'],
    desc: 'Set info of a Shared Roster Group',
    longdesc:
      `Sets the group's \`label\` (at most 191 characters; empty: members see the identifier) or its \`description\`. Any other key is refused with 400 (members are set with srg_user_add, displayed groups with srg_add_displayed). ` +
      `A new label renames the roster group of the group's members in the rosters that show them. ${NO_GROUP}`,
    note: 'added in 24.06',
    args: [group, groupHost, { name: 'key', type: 'string', desc: 'Information key: label, description', example: 'label' }, { name: 'value', type: 'string', desc: 'Information value', example: 'Family' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { group: 'group3', host: 'myserver.com', key: 'label', value: 'Family' }, result: 0 }],
  }),
  defineCommand({
    name: 'srg_get_members',
    tags: ['shared_roster_group'],
    desc: 'Get members of a Shared Roster Group',
    longdesc: `The bare JIDs of the accounts added with srg_user_add, sorted. @all@ and @online@ are reported by srg_get_info (\`all_users\`, \`online_users\`). ${NO_GROUP}`,
    args: [group, groupHost],
    result: { name: 'members', type: { list: 'string', item: 'member' }, desc: 'List of group members (bare JIDs)' },
    examples: [{ args: { group: 'group3', host: 'myserver.com' }, result: ['user1@localhost', 'user2@localhost'] }],
  }),
  defineCommand({
    name: 'srg_user_add',
    tags: ['shared_roster_group'],
    desc: 'Add the JID user@host to the Shared Roster Group',
    longdesc:
      'The account may be of any host served here, also one other than the group\'s. `user` may also be `@all@` (every account of the group\'s host, present and future) ' +
      `or \`@online@\` (every account of the group's host with an available session). ${ROSTERS} ` +
      'Fails with 404 when the account or the group does not exist, with 409 when it is a member already, with 400 when a host is not served here or a name is not valid.',
    ...MEMBER_CHANGE,
  }),
  defineCommand({
    name: 'srg_user_del',
    tags: ['shared_roster_group'],
    desc: 'Delete this JID user@host from the Shared Roster Group',
    longdesc:
      `\`user\` may also be \`@all@\` or \`@online@\`. ${ROSTERS} ` +
      'Fails with 404 when the account or the group does not exist or the account is not a member, with 400 when a host is not served here or a name is not valid.',
    ...MEMBER_CHANGE,
  }),
  defineCommand({
    name: 'srg_get_displayed',
    tags: ['shared_roster_group'],
    desc: 'Get displayed groups of a Shared Roster Group',
    longdesc: `The groups whose members the group's members see, in the order they were added: the identifier for a group of the same host, \`group@vhost\` for another. ${NO_GROUP}`,
    note: 'added in 24.06',
    args: [group, groupHost],
    result: { name: 'display', type: { list: 'string', item: 'group' }, desc: 'List of groups to display' },
    examples: [{ args: { group: 'group3', host: 'myserver.com' }, result: ['group1', 'group2'] }],
  }),
  defineCommand({
    name: 'srg_add_displayed',
    tags: ['shared_roster_group'],
    desc: 'Add a group to displayed_groups of a Shared Roster Group',
    longdesc:
      `The group's members see the members of \`add\` from now on. ${DISPLAY} ${ROSTERS} ` +
      `Fails with 404 when either group does not exist, with 409 when the group displays it already, with 400 when a host is not served here or an identifier is not one.`,
    note: 'added in 24.06',
    args: [group, groupHost, { name: 'add', type: 'string', desc: 'Group to add to displayed_groups', example: 'group1' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { group: 'group3', host: 'myserver.com', add: 'group1' }, result: 0 }],
  }),
  defineCommand({
    name: 'srg_del_displayed',
    tags: ['shared_roster_group'],
    desc: 'Delete a group from displayed_groups of a Shared Roster Group',
    longdesc:
      `The group's members no longer see the members of \`del\` (unless another of their groups displays them). ${ROSTERS} ` +
      `Fails with 404 when the group does not exist or does not display \`del\`, with 400 when a host is not served here or an identifier is not one.`,
    note: 'added in 24.06',
    args: [group, groupHost, { name: 'del', type: 'string', desc: 'Group to delete from displayed_groups', example: 'group1' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { group: 'group3', host: 'myserver.com', del: 'group1' }, result: 0 }],
  }),
] as const;

/** srg_create's version-0 form: `\n` (backslash, n, as ejabberd takes it) or a newline separates the groups. */
function splitDisplay(display: string): string[] {
  return display.split(/\\n|\r?\n/).filter((name) => name !== '');
}

export function sharedRosterHandlers(ctx: AdminContext): HandlersFor<typeof sharedRosterCommands> {
  const api = (command: string) => need(ctx, sharedRosterService, command);
  type CreateArgs = { group: string; host: string; label: string; description: string };
  // srg_create has a handler per API version; the others are typed from their declarations.
  const versioned = {
    'srg_create@v0': async (args: CreateArgs & { display: string }) => {
      await api('srg_create').createGroup({ ...args, display: splitDisplay(args.display) });
    },
    'srg_create@v1': async (args: CreateArgs & { display: string[] }) => {
      await api('srg_create').createGroup(args);
    },
  };
  const handlers: Omit<HandlersFor<typeof sharedRosterCommands>, 'srg_create'> = {
    srg_add: async ({ group, host }) => {
      await api('srg_add').createGroup({ group, host, label: '', description: '', display: [] });
    },
    srg_delete: async (args) => {
      await api('srg_delete').deleteGroup(args);
    },
    srg_list: (args) => api('srg_list').listGroups(args),
    srg_get_info: async (args) => {
      const info = await api('srg_get_info').groupInfo(args);
      return [
        { key: 'label', value: info.label },
        { key: 'description', value: info.description },
        { key: 'displayed_groups', value: info.displayed.join(', ') },
        { key: 'all_users', value: String(info.allUsers) },
        { key: 'online_users', value: String(info.onlineUsers) },
      ];
    },
    srg_set_info: async (args) => {
      await api('srg_set_info').setGroupInfo(args);
    },
    srg_get_members: (args) => api('srg_get_members').members(args),
    srg_user_add: async (args) => {
      await api('srg_user_add').addMember(args);
    },
    srg_user_del: async (args) => {
      await api('srg_user_del').removeMember(args);
    },
    srg_get_displayed: (args) => api('srg_get_displayed').displayed(args),
    srg_add_displayed: async (args) => {
      await api('srg_add_displayed').addDisplayed(args);
    },
    srg_del_displayed: async (args) => {
      await api('srg_del_displayed').removeDisplayed(args);
    },
  };
  return { ...handlers, ...versioned } as unknown as HandlersFor<typeof sharedRosterCommands>;
}
