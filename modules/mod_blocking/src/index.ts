/**
 * mod_blocking: the blocking command (XEP-0191). An account's blocklist, managed by its clients (or other
 * modules, through `blockingService` of `@service/mod_blocking/api`), stored per account and enforced on
 * delivery; pushes to the resources that asked for the list. mod_roster's service, when it runs, tells
 * which contacts get presence when the list changes.
 */
import { Jid, badArgument, defineModule, provide } from '@service/plugin-api';
import { rosterService } from '@service/mod_roster/api';
import { Blocking, normalize } from './blocking.js';
import { BlockingEnforcement } from './enforcement.js';
import { blockingHandlers } from './iq.js';
import { BLOCKING_MIGRATIONS } from './migrations.js';
import { NS_BLOCKING } from './ns.js';
import { PresenceOnChange } from './presence-on-change.js';
import { blockingService, type BlockingApi } from './public-api.js';
import { BlocklistPushes, blocklistInterestCarrier } from './pushes.js';
import { BlocklistStore } from './store.js';

/** Outermost of the policy layers: a blocked stanza is dropped before privacy lists, rosters or carbons see it. */
const CHAIN_PRIORITY = 10;

export default defineModule({
  name: 'mod_blocking',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Blocking command (XEP-0191), enforced on delivery',
  provides: [blockingService],
  consumes: [{ ref: rosterService, optional: true }],
  migrations: BLOCKING_MIGRATIONS,
  start(ctx) {
    const { xmpp } = ctx.services;
    const store = new BlocklistStore(() => ctx.db, ctx.services.caches);
    const presence = new PresenceOnChange(xmpp.sessions, xmpp.router, () => ctx.find(rosterService));
    const blocking = new Blocking(store, new BlocklistPushes(xmpp.sessions, xmpp.router), presence);
    const enforcement = new BlockingEnforcement(store, presence, xmpp.router);
    const account = (user: string, host: string) => Jid.parse(`${user}@${host}`);
    const normalized = (jids: readonly string[]) =>
      jids.map((jid) => {
        const text = normalize(jid);
        if (text === undefined) throw badArgument('jids', `'${jid}' is not a valid JID`);
        return text;
      });
    const api: BlockingApi = {
      blocklist: (user, host) => blocking.list(account(user, host)),
      block: (user, host, jids) => blocking.block(account(user, host), normalized(jids)),
      unblock: (user, host, jids) => blocking.unblock(account(user, host), jids && normalized(jids)),
      isBlocked: (user, host, other) => blocking.isBlocked(account(user, host), Jid.parse(other)),
    };
    return {
      services: [provide(blockingService, api)],
      xmpp: {
        sessionCarriers: [blocklistInterestCarrier],
        iq: blockingHandlers(blocking),
        middleware: [
          { chain: 'deliver', priority: CHAIN_PRIORITY, handler: (c, next) => enforcement.onDeliver(c, next) },
          { chain: 'user_send', priority: CHAIN_PRIORITY, handler: (c, next) => enforcement.onSend(c, next) },
        ],
        // XEP-0191 §3.1 asks the server; clients also look at their account (XEP-0030 on the bare JID).
        disco: [
          { scope: 'server', features: [NS_BLOCKING] },
          { scope: 'account', features: [NS_BLOCKING] },
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
