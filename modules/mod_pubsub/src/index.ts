/**
 * mod_pubsub: publish-subscribe (XEP-0060) on a service domain per virtual host (pubsub.@HOST@, service.ts),
 * and personal eventing (XEP-0163) on every account's bare JID.
 * Accounts publish to their own nodes (created on first publish, with publish-options preconditions);
 * contacts with a presence subscription and the account's own resources get notifications of the nodes
 * their clients ask `+notify` for in their entity capabilities (XEP-0115, verified and cached in SQL),
 * and the last item of each when they come online. Avatars, nicks, OMEMO and bookmarks work on it.
 * Other modules publish through `pepService` (`@service/mod_pubsub/api`).
 */
import { discoItemsService } from '@service/mod_disco/api';
import { pepPortability } from './portability.js';
import { Jid, defineModule, provide, type AclSubject } from '@service/plugin-api';
import { rosterService } from '@service/mod_roster/api';
import { RosterView } from './access.js';
import { Capabilities } from './caps.js';
import { pubsubCommands, pubsubHandlers } from './commands.js';
import { LastItems } from './last-items.js';
import { MembershipStore } from './membership-store.js';
import { PUBSUB_MIGRATIONS } from './migrations.js';
import { Notifier } from './notifications.js';
import { NS_PUBSUB, NS_PUBSUB_OWNER, PEP_FEATURES } from './ns.js';
import { Pep } from './pep.js';
import { pepApi } from './pep-api.js';
import { pepDisco } from './pep-disco.js';
import { ownerGet, ownerSet, pubsubGet, pubsubSet } from './pep-iq.js';
import { pepService } from './public-api.js';
import { PubsubService } from './service.js';
import { ServiceDispatch } from './service-dispatch.js';
import { PubsubStore } from './store.js';

/**
 * On user_send before carbons (60) and archiving (65), after the roster's subscriptions (40): the answers
 * to our capabilities queries never go further, and presence has passed mod_presence's broadcast (it
 * runs in next()) before the last items follow it.
 */
const SEND_PRIORITY = 45;

export default defineModule({
  name: 'mod_pubsub',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Publish-subscribe (XEP-0060) on pubsub.@HOST@ and personal eventing (XEP-0163) on every account, with entity capabilities (XEP-0115)',
  doc:
    "Every account is a PEP service on its bare JID: it publishes to its own nodes (created on first publish with the publish-options, whose preconditions an existing node must meet, XEP-0060 §7.1.5), " +
    'retracts, configures (`pubsub#node_config`), purges and deletes them; access models open, presence (the default), roster and whitelist say who may read them. ' +
    "Notifications go to the account's own resources and to contacts with a presence subscription whose clients ask for `<node>+notify` in their entity capabilities (XEP-0115; " +
    'the server asks a client for the features behind a caps hash it does not know, checks them against the hash and keeps them in SQL), and the last item of each node follows a contact\'s first available presence. ' +
    'The pubsub service (pubsub.@HOST@) has nodes created by whom `access_createnode` allows, configured, purged and deleted by their owners, explicit subscriptions with notifications, ' +
    'affiliations (owner, publisher, member, outcast), the same access models, and service discovery of nodes and items. ' +
    'Nodes and persistent items (`pubsub#max_items`, `pubsub#item_expire`) are stored in SQL tables `pubsub_nodes`, `pubsub_items`, `pubsub_affiliations`, `pubsub_subscriptions` and `pubsub_caps`; removing an account removes its PEP nodes, its subscriptions and affiliations, and the service nodes it alone owned.',
  provides: [pepService],
  // Rosters decide the presence and roster access models; the service domains are listed in the server's disco#items when mod_disco runs.
  consumes: [
    { ref: rosterService, optional: true },
    { ref: discoItemsService, optional: true },
  ],
  options: {
    host: {
      type: 'string',
      default: 'pubsub.@HOST@',
      doc: 'The domain of the pubsub service; @HOST@ is replaced by each virtual host.',
    },
    access_createnode: { type: 'string', default: 'all', doc: 'The access rule that says who may create nodes on the pubsub service.' },
    max_items_node: {
      type: 'integer',
      default: 1000,
      min: 1,
      doc: "The largest pubsub#max_items a node may have, and what the value 'max' stands for (XEP-0060 §7.1.5, used by bookmarks).",
    },
    db_type: { type: 'enum', values: ['sql', 'mnesia'], doc: "Where nodes and items are stored: 'sql' or 'mnesia' (the embedded store); defaults to default_db." },
  },
  migrations: PUBSUB_MIGRATIONS,
  commands: pubsubCommands,
  start(ctx) {
    const { router, sessions } = ctx.services.xmpp;
    const store = new PubsubStore(ctx.db);
    const caps = new Capabilities(ctx.db, router, ctx.logger);
    const isLocalHost = (host: string) => router.isLocalHost(host);
    const notifier = new Notifier({ router, sessions, caps, isLocalHost });
    const now = () => Date.now();
    const limits = () => ({ maxItemsNode: ctx.options.max_items_node });
    const pep = new Pep({ store, notifier, roster: () => ctx.find(rosterService), limits, now, hooks: ctx.services.hooks, logger: ctx.logger });
    const access = () => ctx.services.access();
    const subject = (bare: string): AclSubject => {
      const at = bare.indexOf('@');
      return at === -1 ? { server: bare } : { user: bare.slice(0, at), server: bare.slice(at + 1) };
    };
    const service = new PubsubService({
      store,
      members: new MembershipStore(ctx.db),
      router,
      roster: () => ctx.find(rosterService),
      limits,
      mayCreate: (bare) => access().matchRule(ctx.options.access_createnode, subject(bare)) === 'allow',
      now,
    });
    const dispatch = new ServiceDispatch(service, router, ctx.logger);
    const serviceHosts = new Map(ctx.hosts.map((host) => [ctx.options.host.replaceAll('@HOST@', host).toLowerCase(), host]));
    const disco = ctx.find(discoItemsService);
    const unlist = disco?.addServerItems((host) => [...serviceHosts].filter(([, of]) => of === host).map(([jid]) => ({ jid, name: 'Publish-Subscribe' })));
    const unlistPep = disco?.addAccountItems(pepDisco(pep));
    const lastItems = new LastItems({ caps, store, router, sessions, roster: () => new RosterView(ctx.find(rosterService)), logger: ctx.logger, now, isLocalHost });
    // A restart of mod_roster restarts this module, which then listens to the new one.
    const stopListening = ctx.find(rosterService)?.onSubscriptionChange((change) =>
      lastItems.subscriptionChanged(change).catch((err: unknown) => ctx.logger.warn({ err }, 'could not send the last PEP items to a new contact')),
    );
    return {
      services: [provide(pepService, pepApi(pep))],
      portability: [pepPortability(store, limits)],
      handlers: pubsubHandlers(store),
      stop: () => {
        stopListening?.();
        caps.stop();
        unlist?.();
        unlistPep?.();
      },
      xmpp: {
        iq: [
          { type: 'get', ns: NS_PUBSUB, name: 'pubsub', to: 'account', handler: pubsubGet(pep) },
          { type: 'set', ns: NS_PUBSUB, name: 'pubsub', to: 'account', handler: pubsubSet(pep) },
          { type: 'get', ns: NS_PUBSUB_OWNER, name: 'pubsub', to: 'account', handler: ownerGet(pep) },
          { type: 'set', ns: NS_PUBSUB_OWNER, name: 'pubsub', to: 'account', handler: ownerSet(pep) },
        ],
        domains: [...serviceHosts.keys()].map((domain) => ({ domain, handler: (stanza, from, to) => dispatch.handle(stanza, from, to) })),
        middleware: [{ chain: 'user_send', priority: SEND_PRIORITY, handler: lastItems.layer }],
        disco: [{ scope: 'account', identities: [{ category: 'pubsub', type: 'pep' }], features: [NS_PUBSUB, ...PEP_FEATURES] }],
      },
      hooks: [
        {
          hook: 'remove_user',
          handler: async (user, host) => {
            const account = new Jid(user, host, undefined);
            await pep.removeAccount(account);
            await service.removeAccount(account.bare);
          },
        },
        { hook: 'clear_cache', handler: () => caps.clear() },
      ],
    };
  },
});
