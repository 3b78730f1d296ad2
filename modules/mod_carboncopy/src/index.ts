/**
 * mod_carboncopy: message carbons (XEP-0280, urn:xmpp:carbons:2). A session that enables carbons gets a
 * copy of the messages its account receives on other sessions and of those its other sessions send.
 */
import { defineModule } from '@service/plugin-api';
import { CarbonCopies } from './copies.js';
import { toggleHandlers } from './enable.js';
import { NS_CARBONS } from './ns.js';
import { carbonsCarrier } from './carbon-state.js';

/**
 * Inside the blocking and privacy layers (which run first and may stop a message, so that a refused
 * message is never copied) and outside delivery.
 */
const CHAIN_PRIORITY = 60;

export default defineModule({
  name: 'mod_carboncopy',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Message carbons (XEP-0280)',
  start(ctx) {
    const { xmpp } = ctx.services;
    const copies = new CarbonCopies(xmpp.sessions, xmpp.router);
    return {
      xmpp: {
        sessionCarriers: [carbonsCarrier],
        iq: toggleHandlers(),
        middleware: [
          { chain: 'deliver', priority: CHAIN_PRIORITY, handler: (c, next) => copies.onDeliver(c, next) },
          { chain: 'user_send', priority: CHAIN_PRIORITY, handler: (c, next) => copies.onSend(c, next) },
        ],
        disco: [
          { scope: 'server', features: [NS_CARBONS] },
          { scope: 'account', features: [NS_CARBONS] },
        ],
      },
    };
  },
});
