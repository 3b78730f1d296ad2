/**
 * bookmarks_to_pep: an account's bookmarks kept in private storage (XEP-0048, `storage:bookmarks`) become
 * XEP-0402 items on its PEP node `urn:xmpp:bookmarks:1`, one per room, named by the room's JID, with the
 * node options XEP-0402 §3 asks for (whitelist, every item kept). Publishing an item id again replaces
 * it, so a second run converges to the same node. The XEP-0048 copy on the PEP node `storage:bookmarks` is
 * published too (XEP-0411, bookmarks-sync.ts). The private copy stays: clients that still read it do.
 */
import { Jid, accountKey, badArgument, defineCommand, failed, notFound, x, type AccountsApi, type HandlersFor, type XmlElement } from '@service/plugin-api';
import type { PepApi, PublishOptions } from '@service/mod_pubsub/api';
import type { BookmarksSync } from './bookmarks-sync.js';
import type { PrivateStore } from './store.js';

const NS_BOOKMARKS_PRIVATE = 'storage:bookmarks';
const NS_BOOKMARKS_PEP = 'urn:xmpp:bookmarks:1';

/** XEP-0402 §3: what the bookmarks node must be. */
const BOOKMARK_NODE_OPTIONS: PublishOptions = {
  'pubsub#persist_items': 'true',
  'pubsub#max_items': 'max',
  'pubsub#send_last_published_item': 'never',
  'pubsub#access_model': 'whitelist',
};

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

/** The XEP-0402 payload of one XEP-0048 <conference/>, or undefined when it names no valid room. */
export function pepBookmark(conference: XmlElement): { room: string; payload: XmlElement } | undefined {
  const room = Jid.tryParse(conference.attr('jid') ?? '');
  if (!room || room.user === undefined || room.resource !== undefined) return undefined;
  const autojoin = conference.attr('autojoin');
  const payload = x('conference', {
    xmlns: NS_BOOKMARKS_PEP,
    ...(conference.attr('name') !== undefined ? { name: conference.attr('name')! } : {}),
    autojoin: autojoin === 'true' || autojoin === '1' ? 'true' : 'false',
  });
  const nick = conference.getChildText('nick');
  if (nick) payload.append(x('nick', {}, nick));
  const password = conference.getChildText('password');
  if (password) payload.append(x('password', {}, password));
  return { room: room.bare, payload };
}

export function bookmarksHandlers(store: PrivateStore, accounts: AccountsApi, pep: PepApi | undefined, sync: BookmarksSync | undefined): HandlersFor<typeof bookmarksCommands> {
  return {
    bookmarks_to_pep: async ({ user, host }) => {
      const account = accountKey(user, host);
      if (!(await accounts.exists(account.user, account.host))) throw notFound(`account ${account.user}@${account.host} does not exist`);
      const service = pep;
      if (!service || !sync) throw failed('PEP is not enabled: bookmarks_to_pep needs mod_pubsub');
      const stored = await store.get(account, NS_BOOKMARKS_PRIVATE);
      const conferences = stored?.getChildren('conference') ?? [];
      if (!conferences.length) throw failed(`${account.user}@${account.host} has no bookmarks in private storage to convert`);
      const bookmarks = conferences.map(pepBookmark).filter((b) => b !== undefined);
      if (!bookmarks.length) throw badArgument('user', `the private-storage bookmarks of ${account.user}@${account.host} name no valid room JID`);
      const owner = `${account.user}@${account.host}`;
      for (const { room, payload } of bookmarks) {
        await service.publish(owner, NS_BOOKMARKS_PEP, payload, { itemId: room, publishOptions: BOOKMARK_NODE_OPTIONS });
      }
      // And the XEP-0048 copy on PEP that XEP-0411 keeps, for clients that read bookmarks there.
      await sync.publish(account, stored!);
      return 'Bookmarks exported to PEP node';
    },
  };
}
