/**
 * mod_fail2ban: bans an address after too many failed logins from it, to any accounts, like ejabberd's module
 * of that name, but on every way in that reports failed logins (XMPP, HTTP Basic on /api and XML-RPC, the
 * OAuth password grant and form). The counting and refusing stay in the kernel's failed-login limit, which
 * every way in already reports to; this module sets its address-ban policy through the plugin API's
 * `services.logins` while it runs, offers `unban_ip`, and carries bans and unbans to the other nodes of a
 * cluster. A banned address gets the stream error policy-violation at its stream header, or HTTP 403 with
 * Retry-After (XML-RPC: fault 32), each saying how many seconds are left; each ban is logged.
 */
import { defineModule, parseAddressRange, type HandlersFor } from '@service/plugin-api';
import { ClusterBans } from './cluster-bans.js';
import { MALFORMED_ADDRESS, fail2banCommands } from './commands.js';

export default defineModule({
  name: 'mod_fail2ban',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Bans addresses after failed logins on every way in, cluster-wide; unban_ip',
  options: {
    c2s_auth_ban_lifetime: {
      type: 'integer',
      default: 3600,
      min: 1,
      doc: 'Seconds an address stays banned, and the span its failed logins are counted over.',
    },
    c2s_max_auth_failures: {
      type: 'integer',
      default: 20,
      min: 1,
      doc: 'Failed logins from one address, to any accounts and on any way in, that ban it.',
    },
  },
  commands: fail2banCommands,
  start(ctx) {
    const { logins, nodes } = ctx.services;
    const applyOptions = (options: typeof ctx.options) =>
      logins.setAddressBans({ maxFailures: options.c2s_max_auth_failures, banSeconds: options.c2s_auth_ban_lifetime });
    applyOptions(ctx.options);
    const cluster = new ClusterBans(logins, nodes, ctx.logger);
    const handlers: HandlersFor<typeof fail2banCommands> = {
      unban_ip: async ({ address }, call) => {
        const range = parseAddressRange(address.trim());
        if (!range) return MALFORMED_ADDRESS;
        const here = logins.unbanAddresses(range);
        const elsewhere = await cluster.unbanElsewhere(`${range.address}/${range.prefixLength}`);
        const unbanned = Math.max(here, elsewhere);
        call.log.info({ address, unbanned }, 'unban_ip %s: %d addresses freed', address, unbanned);
        return unbanned;
      },
    };
    return {
      handlers,
      channels: cluster.channels(),
      reload(next) {
        applyOptions(next);
      },
      stop() {
        cluster.stop();
        // ejabberd without mod_fail2ban bans no address: the kernel keeps only its guard of one account.
        logins.setAddressBans(undefined);
      },
    };
  },
});
