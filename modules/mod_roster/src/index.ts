/**
 * mod_roster: rosters and presence subscriptions (RFC 6121 §2, §3), roster versioning (XEP-0237) and
 * subscription pre-approval (RFC 6121 §3.4). Other modules consume its roster service (`rosterService`
 * of `@service/mod_roster/api`): mod_presence for who gets whose presence, privacy lists and blocking for
 * contacts' subscriptions and groups, the admin commands for reading and editing rosters.
 */
import { Jid, defineModule, provide, x } from '@service/plugin-api';
import { rosterApi } from './api.js';
import { rosterService } from './public-api.js';
import { ROSTER_MIGRATIONS } from './migrations.js';
import { RosterPushes, pushFilter, rosterInterestCarrier } from './pushes.js';
import { removeAccountRoster } from './removal.js';
import { Roster, type RosterSettings } from './roster.js';
import { rosterGet, rosterSet } from './roster-iq.js';
import { NS_PRE_APPROVAL, NS_ROSTER, NS_ROSTER_VERSIONING } from './roster-xml.js';
import { rosterPortability } from './portability.js';
import { RosterStore } from './store.js';
import { inboundSubscriptions, outboundSubscriptions, resendPendingRequests } from './subscriptions.js';

/**
 * Subscription stanzas are handled early in user_send and deliver, so that later layers (carbons,
 * archives) see them stamped with bare JIDs, and stanzas the state machine drops never reach them.
 */
const SUBSCRIPTION_PRIORITY = 40;
/**
 * Roster pushes are chosen per session in user_receive before stream management (1000) counts and queues
 * them, and before privacy lists (12), which need not judge a stanza that is not sent.
 */
const PUSH_FILTER_PRIORITY = 10;

export default defineModule({
  name: 'mod_roster',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  provides: [rosterService],
  summary: 'Rosters (RFC 6121): roster get/set/remove, pushes, presence subscriptions, roster versioning',
  doc:
    'Stores each account\'s contacts with their names, groups and presence subscription states, answers ' +
    'jabber:iq:roster, pushes every change to the clients that asked for the roster, and runs the ' +
    'subscription handshake (subscribe, subscribed, unsubscribe, unsubscribed) of RFC 6121, including ' +
    'pre-approval. Requests that arrive while the account is offline are stored and delivered at its next login.',
  options: {
    versioning: {
      type: 'boolean',
      default: true,
      doc: 'Roster versioning (XEP-0237): a client that cached the roster gets it again only when it changed.',
    },
    max_roster_size: {
      type: 'integer',
      default: 1000,
      min: 1,
      infinity: true,
      doc: "How many contacts a roster may hold; adding more is refused with <not-allowed/>. 'infinity' for no limit.",
    },
    db_type: { type: 'enum', values: ['sql', 'mnesia'], doc: 'Where rosters are stored; defaults to default_db.' },
  },
  migrations: ROSTER_MIGRATIONS,
  start(ctx) {
    // No reload(): a change of options (db_type included) restarts the module, and mod_presence with it.
    const settings: RosterSettings = { versioning: ctx.options.versioning, maxRosterSize: ctx.options.max_roster_size };
    const xmpp = ctx.services.xmpp;
    const store = new RosterStore(ctx.db, ctx.services.caches);
    const roster = new Roster(store, new RosterPushes(xmpp), xmpp, ctx.logger, () => settings);
    return {
      services: [provide(rosterService, rosterApi(roster, ctx.dbKind))],
      portability: [rosterPortability(store)],
      xmpp: {
        sessionCarriers: [rosterInterestCarrier],
        iq: [
          { type: 'get', ns: NS_ROSTER, to: 'account', handler: rosterGet(roster) },
          { type: 'set', ns: NS_ROSTER, to: 'account', handler: rosterSet(roster) },
        ],
        middleware: [
          { chain: 'user_send', priority: SUBSCRIPTION_PRIORITY, handler: outboundSubscriptions(roster, xmpp.router) },
          { chain: 'deliver', priority: SUBSCRIPTION_PRIORITY, handler: inboundSubscriptions(roster, ctx.services.accounts) },
          { chain: 'user_receive', priority: PUSH_FILTER_PRIORITY, handler: pushFilter },
        ],
        features: [
          { build: () => (settings.versioning ? x('ver', { xmlns: NS_ROSTER_VERSIONING }) : undefined) },
          { build: () => x('sub', { xmlns: NS_PRE_APPROVAL }) },
        ],
      },
      hooks: [
        { hook: 'c2s_initial_presence', handler: (session) => resendPendingRequests(roster, xmpp.router, session) },
        { hook: 'remove_user', handler: (user, host) => removeAccountRoster(roster, new Jid(user, host, undefined)) },
      ],
      stop: () => store.leave(),
    };
  },
});
