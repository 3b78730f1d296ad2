/**
 * push_alltoall: every account of a host gets every other account of the host as a contact, with
 * subscription both, in the given group. The batch is planned and checked before any item is written
 * (see batch.ts), so a roster that would overflow max_roster_size changes nothing.
 */
import { badArgument, defineCommand, Jid, type HandlersFor } from '@service/plugin-api';
import { rosterService } from '@service/mod_roster/api';
import { host as hostArg } from '../args.js';
import { need, type AdminContext } from '../context.js';
import { servedHost } from './accounts.js';
import { RosterBatch, rosterFailure } from './batch.js';

export const pushAlltoallCommands = [
  defineCommand({
    name: 'push_alltoall',
    tags: ['roster'],
    desc: 'Add all the users to all the users of Host in Group',
    longdesc:
      'Every account of `host` gets every other account of `host` in its roster with subscription both, in `group`: a new item is named after the contact\'s user name; ' +
      'an existing item keeps its name and its other groups, `group` is added to them. Clients that asked for their roster get a push for every item that changed, and presence starts to flow both ways. ' +
      'Accounts registered while it runs are not included. ' +
      'Fails, changing nothing, with 400 for a host not served here or an empty or too long group name, and 409 when the rosters would exceed max_roster_size.',
    args: [
      { ...hostArg, desc: 'Server name' },
      { name: 'group', type: 'string', desc: 'Group name', example: 'Everybody' },
    ],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { host: 'myserver.com', group: 'Everybody' }, result: 0 }],
  }),
] as const;

export function pushAlltoallHandlers(ctx: AdminContext): HandlersFor<typeof pushAlltoallCommands> {
  return {
    push_alltoall: async ({ host, group }, call) => {
      const roster = need(ctx, rosterService, 'push_alltoall');
      const vhost = servedHost(ctx, host);
      if (group === '') throw badArgument('group', 'group must not be empty');
      const users = (await ctx.services.accounts.listUsers(vhost)).map((name) => new Jid(name, vhost, undefined));
      const batch = new RosterBatch(ctx, roster);
      for (const owner of users) {
        const current = await batch.preload(owner);
        for (const contact of users) {
          if (contact === owner) continue;
          const existing = current.get(contact.bare);
          const groups = new Set(existing?.groups ?? []);
          groups.add(group);
          try {
            batch.add({ owner, contact, nick: existing ? undefined : contact.user, groups: [...groups], subscription: 'both' });
          } catch (err) {
            // The same group for every item: what is wrong with it is wrong with the argument.
            throw rosterFailure(err, 'group');
          }
        }
      }
      await batch.checkRoom();
      await batch.apply((done, total) => call.progress(done, total, 'roster items'));
      call.log.info({ host: vhost, group, accounts: users.length, items: batch.size }, 'push_alltoall: %d accounts of %s in group %s', users.length, vhost, group);
    },
  };
}
