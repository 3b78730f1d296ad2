/**
 * mod_privacy: privacy lists (XEP-0016). Lists per account (stored), a default list per account, an
 * active list per session; enforced on delivery and on sending. mod_roster's service, when it runs,
 * answers the 'subscription' and 'group' items; without it those items match nobody. Provides the privacy
 * service (`privacyService` of `@service/mod_privacy/api`) to the admin commands.
 */
import { Jid, StanzaError, defineModule, provide, type IqContext } from '@service/plugin-api';
import { privacyPortability } from './portability.js';
import { rosterService } from '@service/mod_roster/api';
import { PrivacyEnforcement } from './enforcement.js';
import { PRIVACY_MIGRATIONS } from './migrations.js';
import { NS_PRIVACY } from './ns.js';
import { privacyService, type PrivacyApi } from './public-api.js';
import { ListPushes } from './pushes.js';
import { PrivacyRequests } from './requests.js';
import { PrivacyStore } from './store.js';
import { activeListCarrier } from './active-list.js';

/** Inside mod_blocking's layers (10), outside rosters, presence and carbons. */
const CHAIN_PRIORITY = 12;

export default defineModule({
  name: 'mod_privacy',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Privacy lists (XEP-0016), enforced on delivery',
  provides: [privacyService],
  consumes: [{ ref: rosterService, optional: true }],
  migrations: PRIVACY_MIGRATIONS,
  start(ctx) {
    const { xmpp } = ctx.services;
    const store = new PrivacyStore(() => ctx.db, ctx.services.caches);
    const roster = () => ctx.find(rosterService);
    const requests = new PrivacyRequests(store, xmpp.sessions, new ListPushes(xmpp.sessions, xmpp.router), roster);
    const enforcement = new PrivacyEnforcement(store, xmpp.sessions, xmpp.router, roster);
    const account = (user: string, host: string) => Jid.parse(`${user}@${host}`);
    const api: PrivacyApi = {
      async apply(user, host, type, query) {
        if (!query.is('query', NS_PRIVACY)) throw new StanzaError('bad-request', `expected a <query xmlns='${NS_PRIVACY}'/>`);
        if (type === 'get') return requests.get(account(user, host), undefined, query);
        await requests.set(account(user, host), undefined, query);
        return undefined;
      },
    };
    /** The account addressed, when it is the sender's own. */
    const ownAccount = (c: IqContext) => {
      if (!c.self) throw new StanzaError('forbidden', "only the account's own clients manage its privacy lists");
      return c.to;
    };
    return {
      services: [provide(privacyService, api)],
      portability: [privacyPortability(store)],
      xmpp: {
        sessionCarriers: [activeListCarrier],
        iq: [
          { type: 'get', ns: NS_PRIVACY, to: 'account', handler: (c) => requests.get(ownAccount(c), c.session, c.payload) },
          { type: 'set', ns: NS_PRIVACY, to: 'account', handler: (c) => requests.set(ownAccount(c), c.session, c.payload) },
        ],
        middleware: [
          { chain: 'deliver', priority: CHAIN_PRIORITY, handler: (c, next) => enforcement.onDeliver(c, next) },
          { chain: 'user_receive', priority: CHAIN_PRIORITY, handler: (c, next) => enforcement.onReceive(c, next) },
          { chain: 'user_send', priority: CHAIN_PRIORITY, handler: (c, next) => enforcement.onSend(c, next) },
        ],
        disco: [
          { scope: 'server', features: [NS_PRIVACY] },
          { scope: 'account', features: [NS_PRIVACY] },
        ],
      },
      hooks: [
        { hook: 'remove_user', handler: (user, host) => store.removeAccount(account(user, host)) },
        { hook: 'clear_cache', handler: () => store.clearCache() },
      ],
      stop: () => store.leave(),
    };
  },
});
