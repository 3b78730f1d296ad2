/**
 * mod_ping: XMPP ping (XEP-0199). Answers pings addressed to the server and, with `send_pings`, pings
 * clients that have been silent for `ping_interval` seconds, closing the stream of those that do not
 * answer within `ping_ack_timeout` seconds (a connection that died without the TCP stack noticing).
 */
import { defineModule } from '@service/plugin-api';
import { IdlePinger, type PingSettings } from './idle-pinger.js';
import { NS_PING } from './ns.js';

export default defineModule({
  name: 'mod_ping',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'XMPP ping (XEP-0199): answers pings, optionally pings idle clients',
  options: {
    send_pings: { type: 'boolean', default: false, doc: 'Ping clients that have sent nothing for `ping_interval` seconds.' },
    ping_interval: { type: 'integer', default: 60, min: 1, doc: 'Seconds of silence from a client before the server pings it.' },
    ping_ack_timeout: { type: 'integer', default: 32, min: 1, doc: 'Seconds a pinged client has to answer before its stream is closed.' },
  },
  async start(ctx) {
    const { xmpp } = ctx.services;
    const settingsOf = (options: typeof ctx.options): PingSettings | undefined =>
      options.send_pings ? { intervalMs: options.ping_interval * 1000, ackTimeoutMs: options.ping_ack_timeout * 1000 } : undefined;
    const pinger = new IdlePinger(xmpp, ctx.logger);
    await pinger.configure(settingsOf(ctx.options));
    return {
      xmpp: {
        iq: [{ type: 'get', ns: NS_PING, to: 'server', handler: () => undefined }],
        disco: [{ scope: 'server', features: [NS_PING] }],
        // Outside stream management (1), whose own elements (acks) are signs of life too; always passing
        // the element on, so that stream management still counts the answer to our ping.
        middleware: [
          {
            chain: 'stream_in',
            priority: 0,
            handler: async (c, next) => {
              if (c.session) pinger.heard(c.session, c.element);
              await next();
            },
          },
        ],
      },
      hooks: [
        { hook: 'c2s_session_bound', handler: (session) => pinger.track(session) },
        { hook: 'c2s_session_closed', handler: (session) => pinger.untrack(session) },
      ],
      reload(next) {
        return pinger.configure(settingsOf(next));
      },
      stop() {
        return pinger.configure(undefined);
      },
    };
  },
});
