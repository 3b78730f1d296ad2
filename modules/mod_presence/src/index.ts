/**
 * mod_presence: presence (RFC 6121 §4) on top of mod_roster's subscriptions (its roster service, which it
 * consumes): broadcast to subscribers and own resources, probes at login and their answers, directed
 * presence, and unavailable presence when a session ends or the account is removed.
 */
import { defineModule, x } from '@service/plugin-api';
import { rosterService } from '@service/mod_roster/api';
import { PresenceBroadcast } from './broadcast.js';
import { outgoingPresence } from './outgoing.js';
import { Probes } from './probes.js';
import { sessionPresenceCarrier } from './session-presence.js';

/** After mod_roster's subscription layers (40). */
const PRESENCE_PRIORITY = 60;

export default defineModule({
  name: 'mod_presence',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Presence (RFC 6121): broadcast to subscribers, probes, directed presence, unavailable on disconnect',
  doc:
    'Broadcasts each session\'s presence to the contacts subscribed to the account and to its own resources, ' +
    'probes the contacts it is subscribed to at login and answers their probes, remembers directed presence, ' +
    'and sends unavailable presence when a session ends, also when its connection is lost.',
  consumes: [rosterService],
  start(ctx) {
    // Required, so it runs; a restart of mod_roster restarts this module, which then listens to the new one.
    const roster = ctx.use(rosterService);
    const xmpp = ctx.services.xmpp;
    const broadcast = new PresenceBroadcast(roster, xmpp, ctx.logger);
    const probes = new Probes(roster, xmpp, ctx.logger);
    const stopListening = roster.onSubscriptionChange((change) => broadcast.subscriptionChanged(change));
    return {
      xmpp: {
        sessionCarriers: [sessionPresenceCarrier],
        middleware: [
          { chain: 'user_send', priority: PRESENCE_PRIORITY, handler: outgoingPresence(broadcast) },
          { chain: 'deliver', priority: PRESENCE_PRIORITY, handler: probes.answer() },
        ],
      },
      hooks: [
        { hook: 'c2s_initial_presence', handler: (session) => probes.sendProbes(session) },
        { hook: 'c2s_session_closed', handler: (session) => broadcast.sessionEnded(session) },
        {
          // Before the kernel logs the account out (priority 10) and mod_roster forgets its contacts: they
          // see the account go offline while its subscriptions still say who they are.
          hook: 'remove_user',
          priority: 5,
          handler: async (user, host) => {
            for (const session of await xmpp.sessions.byAccount(`${user}@${host}`)) {
              await broadcast.unavailable(session, x('presence', { type: 'unavailable' }));
            }
          },
        },
      ],
      stop() {
        stopListening();
      },
    };
  },
});
