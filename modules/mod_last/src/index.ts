/**
 * mod_last: last activity (XEP-0012). Answers the server's uptime and, for accounts, the time since
 * their last logout with the status they left; records it when an account's last session ends. Uses
 * mod_roster, when enabled, to let contacts with a presence subscription ask. Provides the stored last
 * activity to other modules as `lastActivityService` (`@service/mod_last/api`).
 */
import { accountKey, defineModule, provide } from '@service/plugin-api';
import { maySeePresence, rosterService, type PresenceAccess } from '@service/mod_roster/api';
import { LastActivity } from './activity.js';
import { lastActivityApi } from './api.js';
import { NS_LAST, lastIqHandlers } from './iq.js';
import { logoutTracker } from './logout-tracker.js';
import { LAST_MIGRATIONS } from './migrations.js';
import { lastActivityService } from './public-api.js';
import { LastActivityStore } from './store.js';

export default defineModule({
  name: 'mod_last',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Last activity (XEP-0012)',
  provides: [lastActivityService],
  consumes: [{ ref: rosterService, optional: true }],
  options: {
    db_type: { type: 'enum', values: ['sql', 'mnesia'], doc: "Where last activity is stored: 'sql' or 'mnesia' (the embedded store); defaults to default_db." },
  },
  migrations: LAST_MIGRATIONS,
  start(ctx) {
    const sessions = ctx.services.xmpp.sessions;
    const store = new LastActivityStore(ctx.db);
    const activity = new LastActivity(store, sessions);
    const access: PresenceAccess = (owner, requester) => maySeePresence(ctx.find(rosterService), owner, requester);
    return {
      services: [provide(lastActivityService, lastActivityApi(activity))],
      // The logouts' rows queued for a shared upsert are written first.
      stop: () => store.flush(),
      xmpp: {
        iq: lastIqHandlers(activity, access, ctx.services),
        disco: [{ scope: 'server', features: [NS_LAST] }],
      },
      hooks: [
        { hook: 'c2s_session_closed', handler: logoutTracker(activity, sessions) },
        { hook: 'remove_user', handler: (user, host) => activity.delete(accountKey(user, host)).then(() => undefined) },
      ],
    };
  },
});
