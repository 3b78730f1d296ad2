/**
 * What every client stream, TCP or WebSocket, is given (C2SEnvironment), with the configuration's answers read at
 * each use so that reload_config applies to the next stream: the hosts, the SASL mechanisms not offered on a host
 * (host_config's list or the top-level one, and SCRAM mechanisms whose hash is not stored), the access rules. And
 * what the kernel attaches for client streams once its services exist: the WebSocket endpoint (with the c2s
 * listener's limits) and the removal of an account's sessions when the account is removed.
 */
import { DEFAULT_LIMITS, StreamError } from '@service/plugin-api';
import { scramHashesOf } from '../../accounts/scram.js';
import type { C2sListenerConfig } from '../../config/listeners.js';
import type { Config } from '../../config/load.js';
import type { KernelServices } from '../../modules/services.js';
import { unstoredScramMechanisms } from '../sasl/scram.js';
import type { C2SEnvironment } from './stream.js';
import { WEBSOCKET_HANDLER, webSocketEndpoint, type WebSocketEndpoint } from './websocket.js';

/** The environment of client streams, the WebSocket endpoint mounted as the kernel's handler, the removal hook. */
export function attachClientStreams(services: KernelServices, config: () => Config): { environment: C2SEnvironment; websocket: WebSocketEndpoint } {
  const environment = c2sEnvironment(services, config);
  // An account that is removed is logged out everywhere.
  services.hooks.add('remove_user', async (user, host) => {
    await services.xmpp.kickAccount(`${user}@${host}`, new StreamError('not-authorized', 'Your account has been removed'));
  }, 10);
  const websocket = webSocketEndpoint(environment, () => webSocketLimits(config()));
  services.http.register(WEBSOCKET_HANDLER, websocket.http, 'kernel');
  services.http.registerUpgrade(WEBSOCKET_HANDLER, websocket.upgrade, 'kernel');
  return { environment, websocket };
}

export function c2sEnvironment(services: KernelServices, config: () => Config): C2SEnvironment {
  return {
    xmpp: services.xmpp,
    accounts: services.accounts,
    logins: services.logins,
    hooks: services.hooks,
    logger: services.logger,
    hosts: () => config().hosts,
    disabledMechanisms: (host) => {
      const c = config();
      const perHost = Object.entries(c.host_config).find(([name]) => name.toLowerCase() === host)?.[1];
      const disabled = perHost?.disable_sasl_mechanisms ?? c.disable_sasl_mechanisms;
      // A SCRAM mechanism whose hash is not stored could not succeed: not offered (plain storage has them all).
      if (c.auth_password_format === 'plain') return disabled;
      return [...disabled, ...unstoredScramMechanisms(scramHashesOf(c.auth_scram_hash))];
    },
    access: () => config().access,
  };
}

/** The WebSocket endpoint's limits: those of the first c2s listener, or the defaults. */
function webSocketLimits(config: Config): { maxStanzaSize: number; access: string; negotiationTimeoutMs: number } {
  const c2s = config.listen.find((l): l is C2sListenerConfig => l.module === 'service_c2s');
  return {
    maxStanzaSize: c2s?.max_stanza_size ?? DEFAULT_LIMITS.maxStanzaSize,
    access: c2s?.access ?? 'all',
    negotiationTimeoutMs: (c2s?.negotiation_timeout ?? 30) * 1000,
  };
}
