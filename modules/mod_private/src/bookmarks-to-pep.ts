/**
 * bookmarks_to_pep: an account's bookmarks kept in private storage (XEP-0048, `storage:bookmarks`) become
 * XEP-0402 items on its PEP node `urn:xmpp:bookmarks:1`, one per room, named by the room's JID, with the
 * node options XEP-0402 §3 asks for (whitelist, every item kept). Publishing an item id again replaces
 * it, so a second run converges to the same node. The XEP-0048 copy on the PEP node `storage:bookmarks` is
 * published too (XEP-0411, bookmarks-sync.ts). The private copy stays: clients that still read it do.
 */
import { accountKey, badArgument, defineCommand, failed, notFound, type AccountsApi, type HandlersFor } from '@service/plugin-api';
import { NS_BOOKMARKS_LEGACY, pepBookmark } from './bookmark-forms.js';
import type { BookmarksSync } from './bookmarks-sync.js';
import type { PrivateStore } from './store.js';

export const bookmarksCommands = [
  defineCommand({
    name: 'bookmarks_to_pep',
    tags: ['private'],
    desc: 'Export private XML storage bookmarks to PEP',
    longdesc:
      "Converts the account's XEP-0048 bookmarks in private storage (`storage:bookmarks`) to XEP-0402 items on its PEP node `urn:xmpp:bookmarks:1`, one item per room. " +
      'Running it again gives the same node. It fails, naming the reason, when the account has no bookmarks to convert or when PEP (mod_pubsub) is not enabled.',
    args: [
      { name: 'user', type: 'string', desc: 'Username', example: 'bob' },
      { name: 'host', type: 'string', desc: 'Server name', example: 'example.com' },
    ],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { user: 'bob', host: 'example.com' }, result: 'Bookmarks exported to PEP node' }],
  }),
] as const;

export function bookmarksHandlers(store: PrivateStore, accounts: AccountsApi, sync: BookmarksSync | undefined): HandlersFor<typeof bookmarksCommands> {
  return {
    bookmarks_to_pep: async ({ user, host }) => {
      const account = accountKey(user, host);
      if (!(await accounts.exists(account.user, account.host))) throw notFound(`account ${account.user}@${account.host} does not exist`);
      if (!sync) throw failed('PEP is not enabled: bookmarks_to_pep needs mod_pubsub');
      const stored = await store.get(account, NS_BOOKMARKS_LEGACY);
      const conferences = stored?.getChildren('conference') ?? [];
      if (!conferences.length) throw failed(`${account.user}@${account.host} has no bookmarks in private storage to convert`);
      const bookmarks = conferences.map(pepBookmark).filter((b) => b !== undefined);
      if (!bookmarks.length) throw badArgument('user', `the private-storage bookmarks of ${account.user}@${account.host} name no valid room JID`);
      // XEP-0402 items and the XEP-0048 copy on PEP, as the sync carries a client's write (without pruning).
      await sync.exportPrivate(account, stored!);
      return 'Bookmarks exported to PEP node';
    },
  };
}
