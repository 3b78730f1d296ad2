/**
 * One roster at a time: add_rosteritem (API version 1 with a list of groups, version 0 with ejabberd's
 * older `group` text), delete_rosteritem, get_roster, get_roster_count. Everything goes through
 * mod_roster's API, so the owner's clients get their roster pushes and presence follows subscriptions.
 */
import { badArgument, conflict, defineCommand, notFound, type HandlersFor } from '@service/plugin-api';
import { rosterService, type Subscription } from '@service/mod_roster/api';
import { host as hostArg, user as userArg } from '../args.js';
import { need, type AdminContext } from '../context.js';
import { contactJid, localAccount, type AccountArgs } from './accounts.js';
import { RosterBatch, rosterFailure } from './batch.js';
import { SUBSCRIPTIONS } from './filter.js';

const LOCAL: AccountArgs = { user: 'localuser', host: 'localhost' };

const localuser = { name: 'localuser', type: 'string', desc: 'User name', example: 'user1' } as const;
const localhost = { name: 'localhost', type: 'string', desc: 'Server name', example: 'myserver.com' } as const;
const contactUser = { name: 'user', type: 'string', desc: 'Contact user name', example: 'user2' } as const;
const contactHost = { name: 'host', type: 'string', desc: 'Contact server name', example: 'myserver.com' } as const;
const nick = { name: 'nick', type: 'string', desc: 'Nickname (empty for none)', example: 'User 2' } as const;
const subs = { name: 'subs', type: 'string', desc: 'Subscription: none, from, to or both', example: 'both' } as const;

const ADD_LONGDESC =
  "Adds the contact to the roster of `localuser@localhost`, or replaces the item's nickname, groups and subscription. " +
  'The subscription is set directly, without any stanza exchanged: `to` means the owner receives the contact\'s presence, `from` the other way round. ' +
  "When the contact is an account of this server, its side follows: its item for the owner gets the mirrored subscription (`to` ↔ `from`), created without a name or groups if it has none, so both rosters agree and presence flows as they say. " +
  "Every resource of the owner that asked for its roster receives a jabber:iq:roster push about the item (and so does the contact's, when its side changed). " +
  'Fails with 404 when the owner account does not exist, 400 for an unknown virtual host, an invalid contact JID, the owner itself as contact, an unknown `subs` value, ' +
  "a name or group that is too long, or a group given twice, and 409 when the roster is full (max_roster_size). Nothing is changed when it fails.";

function subscription(text: string): Subscription {
  const value = text.toLowerCase() as Subscription;
  if (!SUBSCRIPTIONS.includes(value)) throw badArgument('subs', `subs: '${text}' is not one of ${SUBSCRIPTIONS.join(', ')}`);
  return value;
}

/** Empty group names mean "no group" (ejabberd's clients send `""` for none). */
function groupList(groups: readonly string[]): string[] {
  return groups.filter((g) => g !== '');
}

export const itemCommands = [
  defineCommand({
    name: 'add_rosteritem',
    tags: ['roster'],
    desc: "Add an item to a user's roster",
    longdesc: `API version 0: the groups are one text, separated by \`;\` ("g1;g2"). ${ADD_LONGDESC}`,
    version: 0,
    account: ['localuser', 'localhost'],
    args: [localuser, localhost, contactUser, contactHost, nick, { name: 'group', type: 'string', desc: 'Groups separated by ; (empty for none)', example: 'Friends;Team 1' }, subs],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { localuser: 'user1', localhost: 'myserver.com', user: 'user2', host: 'myserver.com', nick: 'User 2', group: 'Friends;Team 1', subs: 'both' }, result: 0 }],
  }),
  defineCommand({
    name: 'add_rosteritem',
    tags: ['roster', 'v1'],
    desc: "Add an item to a user's roster",
    longdesc: ADD_LONGDESC,
    note: 'updated in 24.02',
    version: 1,
    account: ['localuser', 'localhost'],
    args: [localuser, localhost, contactUser, contactHost, nick, { name: 'groups', type: { list: 'string', item: 'group' }, desc: 'Groups (empty list for none)', example: ['Friends', 'Team 1'] }, subs],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { localuser: 'user1', localhost: 'myserver.com', user: 'user2', host: 'myserver.com', nick: 'User 2', groups: ['Friends', 'Team 1'], subs: 'both' }, result: 0 }],
  }),
  defineCommand({
    name: 'delete_rosteritem',
    tags: ['roster'],
    desc: "Delete an item from a user's roster",
    longdesc:
      'Removes the contact from the roster of `localuser@localhost` as a client\'s roster remove does (RFC 6121 §2.5.2): every resource of the owner that asked for its roster receives a jabber:iq:roster push of the removal, ' +
      "and the subscriptions are cancelled: the contact is sent unsubscribe and unsubscribed as needed, so that its own roster, when it is an account here, moves to subscription none and it stops seeing the owner's presence. " +
      'Fails with 404 when the owner account does not exist or the contact is not in its roster, 409 when the contact is there only through a shared roster group (remove it from the group instead), and 400 for an unknown virtual host or an invalid contact JID.',
    account: ['localuser', 'localhost'],
    args: [localuser, localhost, contactUser, contactHost],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { localuser: 'user1', localhost: 'myserver.com', user: 'user2', host: 'myserver.com' }, result: 0 }],
  }),
  defineCommand({
    name: 'get_roster',
    tags: ['roster'],
    desc: 'Get list of contacts in a local user roster',
    longdesc:
      'The roster as the account\'s clients see it, sorted by JID. `subscription` is `none`, `from`, `to` or `both`; `pending` is `out` (the user asked for the contact\'s presence and has no answer), ' +
      '`in` (the contact asked and the user has not answered; with both requests open this is reported) or `none`; `nick` is empty when the item has no name. ' +
      'Contacts from shared roster groups are listed as the clients see them (subscription both, the groups joined). ' +
      'Subscription requests from people who are not in the roster are not items and are not listed. Fails with 404 when the account does not exist, 400 for an unknown virtual host.',
    note: 'improved in 23.10',
    args: [userArg, hostArg],
    result: {
      name: 'contacts',
      type: {
        list: {
          object: [
            { name: 'jid', type: 'string', desc: 'The contact\'s bare JID' },
            { name: 'nick', type: 'string', desc: 'The name the user gave the contact, or empty' },
            { name: 'subscription', type: 'string', desc: 'none, from, to or both' },
            { name: 'pending', type: 'string', desc: 'in, out or none' },
            { name: 'groups', type: { list: 'string', item: 'group' } },
          ],
        },
        item: 'contact',
      },
    },
    examples: [
      {
        args: { user: 'user1', host: 'myserver.com' },
        result: [
          { jid: 'user2@myserver.com', nick: 'User 2', subscription: 'both', pending: 'none', groups: ['Friends'] },
          { jid: 'user3@myserver.com', nick: '', subscription: 'none', pending: 'out', groups: [] },
        ],
      },
    ],
  }),
  defineCommand({
    name: 'get_roster_count',
    tags: ['roster'],
    desc: 'Get number of contacts in a local user roster',
    longdesc: 'How many items get_roster lists. Fails with 404 when the account does not exist, 400 for an unknown virtual host.',
    note: 'added in 24.06',
    args: [userArg, hostArg],
    result: { name: 'value', type: 'integer', desc: 'Number' },
    examples: [{ args: { user: 'user1', host: 'myserver.com' }, result: 6 }],
  }),
] as const;

export function itemHandlers(ctx: AdminContext): HandlersFor<typeof itemCommands> {
  const rosterFor = (command: string) => need(ctx, rosterService, command);

  const add = async (args: { localuser: string; localhost: string; user: string; host: string; nick: string; subs: string }, groups: string[]) => {
    const roster = rosterFor('add_rosteritem');
    const owner = await localAccount(ctx, args.localuser, args.localhost, LOCAL);
    const contact = contactJid(args.user, args.host);
    const write = { owner, contact, nick: args.nick, groups: groupList(groups), subscription: subscription(args.subs) };
    const batch = new RosterBatch(ctx, roster);
    try {
      batch.add(write);
    } catch (err) {
      throw rosterFailure(err);
    }
    await batch.addMirror(write);
    await batch.checkRoom();
    await batch.apply();
  };

  const handlers = {
    'add_rosteritem@v0': (args: { localuser: string; localhost: string; user: string; host: string; nick: string; group: string; subs: string }) =>
      add(args, args.group.split(';')),
    'add_rosteritem@v1': (args: { localuser: string; localhost: string; user: string; host: string; nick: string; groups: string[]; subs: string }) =>
      add(args, args.groups),
    delete_rosteritem: async ({ localuser, localhost, user, host }: { localuser: string; localhost: string; user: string; host: string }) => {
      const roster = rosterFor('delete_rosteritem');
      const owner = await localAccount(ctx, localuser, localhost, LOCAL);
      const contact = contactJid(user, host);
      const [stored] = await roster.storedItems(owner, [contact.bare]);
      if (!stored) {
        // Seen in the roster, but only through a shared roster group: deleting it is the group's business.
        if ((await roster.getItem(owner, contact))?.inRoster) {
          throw conflict(`${contact.bare} is in the roster of ${owner.bare} only through a shared roster group: remove it from the group (srg_user_del) instead`);
        }
        throw notFound(`${contact.bare} is not in the roster of ${owner.bare}`);
      }
      await roster.deleteItem(owner, contact, { cancelSubscriptions: true });
    },
    get_roster: async ({ user, host }: { user: string; host: string }) => {
      const roster = rosterFor('get_roster');
      const owner = await localAccount(ctx, user, host);
      return (await roster.getRoster(owner)).map((item) => ({
        jid: item.jid,
        nick: item.nick ?? '',
        subscription: item.subscription,
        pending: item.pending,
        groups: [...item.groups],
      }));
    },
    get_roster_count: async ({ user, host }: { user: string; host: string }) => {
      const roster = rosterFor('get_roster_count');
      return roster.countItems(await localAccount(ctx, user, host));
    },
  };
  // Two definitions of add_rosteritem, one handler each under `name@vN`: the mapped type cannot say that.
  return handlers as unknown as HandlersFor<typeof itemCommands>;
}
