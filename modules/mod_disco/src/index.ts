/**
 * mod_disco: service discovery (XEP-0030). Answers disco#info and disco#items for the server's domains
 * and for accounts, from what every module registers in the kernel's disco registry (so a module that
 * stops disappears from the answers). Other modules may list items of the server through
 * `discoItemsService` (`@service/mod_disco/api`). Uses mod_roster's service, when it runs, to answer an
 * account's contacts with a presence subscription (XEP-0030 §8).
 */
import { defineModule, provide } from '@service/plugin-api';
import { maySeePresence, rosterService } from '@service/mod_roster/api';
import { discoHandlers } from './handlers.js';
import { AccountDisco, ServerItems } from './items.js';
import { NS_DISCO_INFO, NS_DISCO_ITEMS } from './ns.js';
import { discoItemsService } from './public-api.js';

export default defineModule({
  name: 'mod_disco',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Service discovery (XEP-0030) of the server and of accounts',
  provides: [discoItemsService],
  consumes: [{ ref: rosterService, optional: true }],
  start(ctx) {
    const serverItems = new ServerItems();
    const accountDisco = new AccountDisco();
    return {
      services: [provide(discoItemsService, { addServerItems: (provider) => serverItems.add(provider), addAccountItems: (provider) => accountDisco.add(provider) })],
      xmpp: {
        iq: discoHandlers(ctx.services.xmpp, ctx.services.accounts, (owner, requester) => maySeePresence(ctx.find(rosterService), owner, requester), serverItems, accountDisco),
        disco: [
          { scope: 'server', identities: [{ category: 'server', type: 'im', name: 'service' }], features: [NS_DISCO_INFO, NS_DISCO_ITEMS] },
          { scope: 'account', identities: [{ category: 'account', type: 'registered' }], features: [NS_DISCO_INFO, NS_DISCO_ITEMS] },
        ],
      },
    };
  },
});
