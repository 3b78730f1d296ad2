/**
 * mod_version: software version (XEP-0092), answered by the server for its own domain. It runs per virtual
 * host: whether the answer names the operating system may differ from host to host
 * (`host_config: <host>: modules: mod_version: {show_os: false}`), and a host may go without it.
 */
import { defineModule } from '@service/plugin-api';
import { NS_VERSION, versionQuery } from './version-query.js';

export default defineModule({
  name: 'mod_version',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Software version (XEP-0092) of the server',
  perHost: true,
  options: {
    show_os: { type: 'boolean', default: true, doc: 'Include the operating system (type and release) in the answer.' },
  },
  start(ctx) {
    let showOs = ctx.options.show_os;
    return {
      xmpp: {
        iq: [{ type: 'get', ns: NS_VERSION, to: 'server', handler: () => versionQuery(ctx.services.server.version, showOs) }],
        disco: [{ scope: 'server', features: [NS_VERSION] }],
      },
      reload(next) {
        showOs = next.show_os;
      },
    };
  },
});
