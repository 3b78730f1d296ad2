/**
 * mod_private: private XML storage (XEP-0049). A client keeps XML on its account under a namespace of its
 * choosing (bookmarks, client preferences); other modules and the admin commands read and write it through
 * the private storage service (`privateStorageService` of `@service/mod_private/api`). bookmarks_to_pep
 * converts an account's XEP-0048 bookmarks to XEP-0402 PEP items (bookmarks-to-pep.ts); while PEP runs,
 * private-storage bookmarks and the PEP node `storage:bookmarks` are kept equal (XEP-0411, bookmarks-sync.ts).
 */
import { accountKey, defineModule, provide, type Jid, type XmlElement } from '@service/plugin-api';
import { privatePortability } from './portability.js';
import { pepService } from '@service/mod_pubsub/api';
import { privateStorageApi } from './api.js';
import { BookmarksSync, NS_BOOKMARKS_COMPAT_PEP, NS_BOOKMARKS_CONVERSION } from './bookmarks-sync.js';
import { bookmarksCommands, bookmarksHandlers } from './bookmarks-to-pep.js';
import { privateIqHandlers } from './iq.js';
import { PRIVATE_MIGRATIONS } from './migrations.js';
import { NS_PRIVATE, NamespacePolicy } from './namespaces.js';
import { privateStorageService } from './public-api.js';
import { PrivateStore } from './store.js';

export default defineModule({
  name: 'mod_private',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Private XML storage (XEP-0049)',
  provides: [privateStorageService],
  // bookmarks_to_pep publishes through PEP when mod_pubsub runs, and says PEP is off when it does not.
  consumes: [{ ref: pepService, optional: true }],
  commands: bookmarksCommands,
  options: {
    db_type: { type: 'enum', values: ['sql', 'mnesia'], doc: "Where the data is stored: 'sql' or 'mnesia' (the embedded store); defaults to default_db." },
  },
  migrations: PRIVATE_MIGRATIONS,
  start(ctx) {
    const store = new PrivateStore(ctx.db);
    const policy = new NamespacePolicy();
    // PEP is there or not for the module's whole run: starting or stopping mod_pubsub restarts this module.
    const pep = ctx.find(pepService);
    const sync = pep && new BookmarksSync(store, pep, ctx.logger);
    return {
      services: [provide(privateStorageService, privateStorageApi(store, policy))],
      portability: [privatePortability(store)],
      handlers: bookmarksHandlers(store, ctx.services.accounts, sync),
      xmpp: {
        iq: privateIqHandlers(store, policy, sync),
        disco: [{ scope: 'server', features: [NS_PRIVATE] }, ...(sync ? [{ scope: 'account' as const, features: [NS_BOOKMARKS_CONVERSION, NS_BOOKMARKS_COMPAT_PEP] }] : [])],
      },
      hooks: [
        { hook: 'remove_user', handler: (user, host) => store.deleteAccount(accountKey(user, host)) },
        ...(sync
          ? [
              { hook: 'pep_item_published' as const, handler: (owner: Jid, node: string, _id: string, payload: XmlElement | undefined) => sync.pepPublished(owner, node, payload) },
              { hook: 'pep_item_retracted' as const, handler: (owner: Jid, node: string) => sync.pepRetracted(owner, node) },
            ]
          : []),
      ],
    };
  },
});
