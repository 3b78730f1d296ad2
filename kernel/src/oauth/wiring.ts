/**
 * The OAuth server as the kernel runs it: the service (tokens, clients, the code flow's records) reading its
 * settings from the configuration at each use, and what plugs it into the rest of the server once the services
 * exist: HTTP Bearer, the SASL mechanisms that take a token (X-OAUTH2, OAUTHBEARER), the /oauth endpoints, and
 * the hooks that drop tokens (clear_cache, an account removed).
 */
import type { Knex } from 'knex';
import type { CachesApi } from '@service/plugin-api';
import type { CommandRegistry } from '../commands/registry.js';
import type { Config } from '../config/load.js';
import type { Logger } from '../log/logger.js';
import type { ScopeRegistry } from '../modules/scopes.js';
import type { KernelServices } from '../modules/services.js';
import { OAUTH_HANDLER, OAuthEndpoints } from './endpoints/handler.js';
import { oauthBearerMechanism, xOAuth2Mechanism } from './sasl.js';
import { OAuthService } from './service.js';

export function createOAuthService(config: () => Config, db: () => Knex, scopes: ScopeRegistry, commands: CommandRegistry, logger: Logger, caches: CachesApi): OAuthService {
  return new OAuthService(
    db,
    () => {
      const c = config();
      return {
        expire: c.oauth_expire,
        access: c.oauth_access,
        clientIdCheck: c.oauth_client_id_check,
        cache: { enabled: c.oauth_use_cache, size: c.oauth_cache_size, lifeTimeMs: c.oauth_cache_life_time * 1000, cacheMissed: c.oauth_cache_missed },
      };
    },
    scopes,
    commands,
    () => config().access,
    logger,
    caches,
  );
}

export function attachOAuth(services: KernelServices, config: () => Config): void {
  const { accounts, hooks, logins, logger } = services;
  services.httpAuth.setBearerTokens({
    resolve: (token) => services.oauth.resolveBearer(token),
    stillValid: (resolved) => services.oauth.bearerStillValid(resolved),
  });
  services.xmpp.sasl.register(xOAuth2Mechanism(() => services.oauth), 'kernel', 80);
  services.xmpp.sasl.register(oauthBearerMechanism(() => services.oauth), 'kernel', 81);
  const endpoints = new OAuthEndpoints({
    oauth: () => services.oauth,
    accounts,
    logins,
    models: services.oauth.models,
    dataDir: () => config().dataDir,
    hosts: () => config().hosts,
    logger,
    settings: () => {
      const c = config();
      return { issuer: c.oauth_issuer, accessTtl: c.oauth_expire, refreshTtl: c.oauth_refresh_token_expire, clientsAllowed: c.oauth_client_id_check !== 'deny' };
    },
  });
  services.http.register(OAUTH_HANDLER, endpoints.handler(), 'kernel');
  hooks.add('clear_cache', () => services.oauth.tokens.clearCache());
  hooks.add('remove_user', async (user, host) => {
    await services.oauth.removeAccount({ user, host });
  });
}
