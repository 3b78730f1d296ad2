/**
 * Offline messages (mod_offline, XEP-0160): get_offline_count.
 */
import { defineCommand, type HandlersFor } from '@service/plugin-api';
import { offlineService } from '@service/mod_offline/api';
import { host, user } from '../args.js';
import { need, type AdminContext } from '../context.js';
import { existingAccount } from '../lookup.js';

export const offlineCommands = [
  defineCommand({
    name: 'get_offline_count',
    tags: ['offline'],
    desc: 'Get the number of unread offline messages',
    longdesc:
      'The messages stored for the account while it had no session taking messages, not yet delivered; expired ones (XEP-0079) are not counted. ' +
      'They are delivered, and no longer counted, when a session of the account next sends its initial presence. ' +
      'Fails with 404 when the account does not exist, with 400 when the host is not served here.',
    args: [user, host],
    result: { name: 'value', type: 'integer', desc: 'Number' },
    examples: [{ args: { user: 'aken', host: 'localhost' }, result: 5 }],
  }),
] as const;

export function offlineHandlers(ctx: AdminContext): HandlersFor<typeof offlineCommands> {
  return {
    get_offline_count: async (args) => {
      const api = need(ctx, offlineService, 'get_offline_count');
      const account = await existingAccount(ctx, args.user, args.host);
      return api.count(account.user, account.host);
    },
  };
}
