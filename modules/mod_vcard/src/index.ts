/**
 * mod_vcard: vCards (XEP-0054). Clients read any local account's vCard and set their own; the admin
 * commands read and write whole vCards or single fields through the vCard service (`vcardService` of
 * `@service/mod_vcard/api`).
 */
import { accountKey, defineModule, provide } from '@service/plugin-api';
import { vcardApi } from './api.js';
import { vcardIqHandlers } from './iq.js';
import { VCARD_MIGRATIONS } from './migrations.js';
import { vcardService } from './public-api.js';
import { VcardStore } from './store.js';
import { vcardPortability } from './portability.js';
import { NS_VCARD, Vcards } from './vcards.js';

export default defineModule({
  name: 'mod_vcard',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'vCards (XEP-0054)',
  provides: [vcardService],
  options: {
    max_size: {
      type: 'integer',
      min: 1,
      infinity: true,
      default: 65536,
      doc: "Largest vCard in bytes (as stored, photo included); a larger one is refused with not-acceptable. XEP-0153 asks avatars to stay under 8 KiB.",
    },
    db_type: { type: 'enum', values: ['sql', 'mnesia'], doc: "Where vCards are stored: 'sql' or 'mnesia' (the embedded store); defaults to default_db." },
  },
  migrations: VCARD_MIGRATIONS,
  start(ctx) {
    const store = new VcardStore(ctx.db);
    // No reload: a change of options restarts the module, which also follows a change of db_type.
    const vcards = new Vcards(store, ctx.options.max_size);
    return {
      services: [provide(vcardService, vcardApi(vcards))],
      portability: [vcardPortability(store, () => ctx.options.max_size)],
      xmpp: {
        iq: vcardIqHandlers(vcards, ctx.services),
        disco: [
          { scope: 'server', features: [NS_VCARD] },
          { scope: 'account', features: [NS_VCARD] },
        ],
      },
      hooks: [{ hook: 'remove_user', handler: (user, host) => store.delete(accountKey(user, host)).then(() => undefined) }],
    };
  },
});
