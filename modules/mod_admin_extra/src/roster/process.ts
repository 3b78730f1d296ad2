/**
 * process_rosteritems: list or delete the roster items of every account that match a filter (the grammar
 * is in filter.ts). Rows are read in pages, narrowed by subscription in the database and by the rest here.
 */
import { badArgument, defineCommand, type HandlersFor } from '@service/plugin-api';
import { rosterService } from '@service/mod_roster/api';
import { need, type AdminContext } from '../context.js';
import { asksOf, parseFilter, SUBSCRIPTIONS } from './filter.js';

const ACTIONS = ['list', 'delete'] as const;

export const processCommands = [
  defineCommand({
    name: 'process_rosteritems',
    tags: ['roster'],
    desc: 'List or delete rosteritems that match filter',
    longdesc:
      '`action` is `list` or `delete`. The four filters must all match: `subs` is `any` or subscriptions separated by `:` (none, from, to, both); ' +
      '`asks` is `any` or pending states separated by `:` (`none`: nothing pending, `out`: the owner asked the contact, `in`: the contact asked the owner; an item with both requests open matches `in` and `out`); ' +
      '`users` (the roster owners) and `contacts` are `any` or JID patterns separated by `:`. A pattern is `user@host`, or `host` alone for contacts without a user part (gateways); ' +
      'each part is a glob over the normalized name: `*` any sequence, `?` one character, `[abc]`, `[a-z]`, `[!abc]` character classes, and a leading `!` negates the part. ' +
      'With rosters in the SQL store (`default_db: sql`, or mod_roster\'s `db_type: sql`), the SQL wildcards `%` (as `*`) and `_` (as `?`) work too, and `[_]` and `[%]` match those characters themselves; ' +
      'in the embedded store (`mnesia`), `%` and `_` are ordinary characters, as in ejabberd\'s Mnesia backend, so `john_doe@example.org` names john_doe only. ' +
      'The rows are the items stored in rosters: stored subscription requests from people not in the roster are rows too (subscription none, ask in); contacts seen only through shared roster groups are not. ' +
      '`delete` removes each match as a client\'s roster remove does: the owner\'s clients get a roster push, and the contact is sent unsubscribe/unsubscribed so that its side follows. ' +
      'The answer lists the matches, sorted by user then contact. Fails with 400, changing nothing, for an unknown action or an invalid filter (naming it).',
    args: [
      { name: 'action', type: 'string', desc: 'Action to perform: list or delete', example: 'list' },
      { name: 'subs', type: 'string', desc: 'Subscriptions: any, or none, from, to, both separated by :', example: 'any' },
      { name: 'asks', type: 'string', desc: 'Pending states: any, or none, out, in separated by :', example: 'any' },
      { name: 'users', type: 'string', desc: 'Roster owners: any, or JID patterns separated by :', example: 'user1@myserver.com' },
      { name: 'contacts', type: 'string', desc: 'Contacts: any, or JID patterns separated by :', example: '*@example.org:gateway.example.org' },
    ],
    result: {
      name: 'response',
      type: {
        list: { object: [{ name: 'user', type: 'string', desc: 'The roster owner' }, { name: 'contact', type: 'string', desc: 'The contact' }] },
        item: 'pairs',
      },
    },
    examples: [
      { args: { action: 'list', subs: 'any', asks: 'any', users: 'user1@myserver.com', contacts: '*@example.org' }, result: [{ user: 'user1@myserver.com', contact: 'user4@example.org' }] },
      { title: 'Delete items nobody uses', args: { action: 'delete', subs: 'none', asks: 'none', users: 'any', contacts: 'any' }, result: [{ user: 'user2@myserver.com', contact: 'old@example.net' }] },
    ],
  }),
] as const;

interface Match {
  readonly user: string;
  readonly contact: string;
}

export function processHandlers(ctx: AdminContext): HandlersFor<typeof processCommands> {
  return {
    process_rosteritems: async ({ action, subs, asks, users, contacts }) => {
      const roster = need(ctx, rosterService, 'process_rosteritems');
      const verb = action.toLowerCase();
      if (!(ACTIONS as readonly string[]).includes(verb)) throw badArgument('action', `action: '${action}' is not one of ${ACTIONS.join(', ')}`);
      const filter = parseFilter({ subs, asks, users, contacts }, roster.dbKind);
      const every = filter.subscriptions.size === SUBSCRIPTIONS.length;
      const matches: Match[] = [];
      for await (const row of roster.scan(every ? undefined : { subscriptions: [...filter.subscriptions] })) {
        if (!filter.subscriptions.has(row.subscription)) continue;
        if (!asksOf(row).some((ask) => filter.asks.has(ask))) continue;
        if (filter.users(row.owner) && filter.contacts(row.contact)) matches.push({ user: row.owner, contact: row.contact });
      }
      matches.sort((a, b) => compare(a.user, b.user) || compare(a.contact, b.contact));
      if (verb === 'delete') {
        for (const { user, contact } of matches) {
          // A row that an earlier deletion's unsubscribe already changed is still removed: it matched when listed.
          await roster.deleteItem(user, contact, { cancelSubscriptions: true });
        }
        if (matches.length) ctx.logger.info({ deleted: matches.length, subs, asks, users, contacts }, 'process_rosteritems deleted %d roster items', matches.length);
      }
      return matches;
    },
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
