/**
 * mod_private: private XML storage (XEP-0049). A client keeps XML on its account under a namespace of its
 * choosing (bookmarks, client preferences); other modules and the admin commands read and write it through
 * the private storage service (`privateStorageService` of `@service/mod_private/api`).
 */
import { accountKey, defineModule, provide } from '@service/plugin-api';
import { privateStorageApi } from './api.js';
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
  options: {
    db_type: { type: 'enum', values: ['sql', 'mnesia'], doc: "Where the data is stored: 'sql' or 'mnesia' (the embedded store); defaults to default_db." },
  },
  migrations: PRIVATE_MIGRATIONS,
  start(ctx) {
    const store = new PrivateStore(ctx.db);
    const policy = new NamespacePolicy();
    return {
      services: [provide(privateStorageService, privateStorageApi(store, policy))],
      xmpp: {
        iq: privateIqHandlers(store, policy),
        disco: [{ scope: 'server', features: [NS_PRIVATE] }],
      },
      hooks: [{ hook: 'remove_user', handler: (user, host) => store.deleteAccount(accountKey(user, host)) }],
    };
  },
});
