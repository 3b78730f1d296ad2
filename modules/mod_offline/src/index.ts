/**
 * mod_offline: offline messages (XEP-0160). Chat and normal messages for an account with no session
 * taking messages are stored (XEP-0334 hints and XEP-0079/XEP-0023 expiry honoured, at most
 * max_user_messages each) and delivered, stamped with XEP-0203 delays, when a session of the account
 * next becomes available with a non-negative priority. The admin commands use the offline service
 * (`offlineService` of `@service/mod_offline/api`); the purges of the store are this module's commands.
 */
import { KeyedLock, accountKey, defineModule, provide, type C2SSession } from '@service/plugin-api';
import { offlinePortability } from './portability.js';
import { offlineApi } from './api.js';
import { offlineCommands, offlinePurges } from './commands.js';
import { OfflineDelivery, takesMessages } from './delivery.js';
import { OFFLINE_MIGRATIONS } from './migrations.js';
import { offlineLayer } from './offline-layer.js';
import { offlineService } from './public-api.js';
import { OfflineStore } from './store.js';

/** Per-session state: whether the session took messages after its last presence. */
const TAKING_MESSAGES = 'mod_offline.taking_messages';

export default defineModule({
  name: 'mod_offline',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Offline messages (XEP-0160): stored while the account is offline, delivered at its next initial presence',
  provides: [offlineService],
  options: {
    max_user_messages: {
      type: 'integer',
      min: 0,
      infinity: true,
      default: 100,
      doc: 'Messages kept per account when access_max_user_messages gives no number for it; beyond, a message is refused with service-unavailable (XEP-0160).',
    },
    access_max_user_messages: {
      type: 'string',
      nonEmpty: true,
      default: 'max_user_offline_messages',
      doc:
        "ejabberd's option: the shaper_rules entry that gives each account its limit (max_user_offline_messages: {5000: admin, 100: all}, say). " +
        'Where the rule is missing or gives no number for the account, max_user_messages applies.',
    },
    db_type: { type: 'enum', values: ['sql', 'mnesia'], doc: "Where messages are stored: 'sql' or 'mnesia' (the embedded store); defaults to default_db." },
  },
  migrations: OFFLINE_MIGRATIONS,
  commands: offlineCommands,
  start(ctx) {
    const { router, sessions } = ctx.services.xmpp;
    const store = new OfflineStore(ctx.db);
    const locks = new KeyedLock();
    const delivery = new OfflineDelivery(store, router, sessions, locks, ctx.logger);
    // ejabberd's limit by account (a shaper rule), else this module's own number.
    const maxUserMessages = (account: { user: string; host: string }): number => {
      const value = ctx.services.access().shaperRuleValue(ctx.options.access_max_user_messages, { user: account.user, server: account.host });
      return typeof value === 'number' ? value : ctx.options.max_user_messages;
    };

    // XEP-0160: the queue goes out when a session starts taking messages — its initial presence, or a
    // later presence that makes its priority non-negative again.
    const onPresence = async (session: C2SSession) => {
      const state = session.state(TAKING_MESSAGES, () => ({ taking: false }));
      const taking = takesMessages(session);
      const started = taking && !state.taking;
      state.taking = taking;
      if (!started) return;
      try {
        await delivery.deliverTo(session);
      } catch (err) {
        // A storage failure must not end the client's stream: the messages stay for the next presence.
        ctx.logger.error({ err, jid: session.jid.full }, 'offline messages could not be delivered');
      }
    };

    const purges = offlinePurges(store, ctx.services, ctx.logger);

    return {
      handlers: purges.handlers,
      channels: purges.channels,
      // A running purge stops between two batches with its module.
      stop: () => purges.stop(),
      services: [provide(offlineService, offlineApi(store))],
      portability: [offlinePortability(store)],
      xmpp: {
        middleware: [
          {
            chain: 'offline',
            handler: offlineLayer({ store, delivery, locks, router, hooks: ctx.services.hooks, logger: ctx.logger, maxUserMessages }),
          },
        ],
        disco: [{ scope: 'server', features: ['msgoffline'] }],
      },
      hooks: [
        { hook: 'c2s_initial_presence', handler: onPresence },
        { hook: 'c2s_presence_changed', handler: onPresence },
        { hook: 'remove_user', handler: (user, host) => store.deleteAccount(accountKey(user, host)).then(() => undefined) },
      ],
    };
  },
});
