/**
 * oidc-provider, configured as a plain OAuth 2.0 authorization server for the flows ejabberd lacks: the
 * authorization code grant with PKCE (S256, required), refresh tokens rotated on every use (a reused one
 * revokes its whole grant), and client_credentials. Its tokens land in the shared token store (adapter.ts);
 * its login and consent pages are ours (interaction.ts); revocation, introspection and the password and
 * implicit grants are served by our own endpoints, so every token answers to the same rules.
 */
import type { AccountService } from '../../accounts/accounts.js';
import type { HttpContext } from '../../http/types.js';
import type { Logger } from '../../log/logger.js';
import { verifySecret } from '../secrets.js';
import type { OAuthService } from '../service.js';
import { errorPage } from '../endpoints/pages.js';
import { adapterClass } from './adapter.js';
import type { ProviderKeys } from './keys.js';
import { LiveScopes } from './live-scopes.js';
import type { ModelStore } from './model-store.js';
import type Provider from 'oidc-provider';
import type { ClientInstance } from 'oidc-provider';

export interface ProviderSettings {
  /** oauth_expire, seconds. */
  readonly accessTtl: number;
  /** oauth_refresh_token_expire, seconds. */
  readonly refreshTtl: number;
  /** oauth_client_id_check is not 'deny'. */
  readonly clientsAllowed: boolean;
}

export interface ProviderSetup {
  readonly issuer: string;
  /** Where the `service_oauth` handler is mounted, e.g. `/oauth`. */
  readonly mount: string;
  readonly keys: ProviderKeys;
  readonly oauth: () => OAuthService;
  readonly accounts: AccountService;
  readonly models: ModelStore;
  readonly settings: () => ProviderSettings;
  readonly logger: Logger;
}

/** Routes below the mount; the others of oidc-provider are switched off. */
export const PROVIDER_ROUTES = { authorization: '/authorize', token: '/token', jwks: '/jwks' } as const;

let noticeSink: Logger | undefined;

/**
 * oidc-provider prints its notices with console.warn/info (e.g. that Node 20 is not an LTS it tests on);
 * they go to our log instead, at debug level, and everything else still reaches the console.
 */
function routeProviderNotices(logger: Logger): void {
  const first = noticeSink === undefined;
  noticeSink = logger;
  if (!first) return;
  for (const level of ['warn', 'info'] as const) {
    const original = console[level].bind(console);
    console[level] = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && args[0].startsWith('oidc-provider ')) noticeSink?.debug(args[0]);
      else original(...args);
    };
  }
}

function accountParts(accountId: string): { user: string; host: string } | undefined {
  const at = accountId.lastIndexOf('@');
  return at > 0 ? { user: accountId.slice(0, at), host: accountId.slice(at + 1) } : undefined;
}

export async function createProvider(setup: ProviderSetup): Promise<Provider> {
  routeProviderNotices(setup.logger);
  const { default: ProviderClass } = await import('oidc-provider');
  const { oauth, settings, logger } = setup;
  const provider = new ProviderClass(setup.issuer, {
    adapter: adapterClass({
      tokens: () => oauth().tokens,
      clients: () => oauth().clients,
      models: setup.models,
      clientsAllowed: () => settings().clientsAllowed,
    }),
    scopes: new LiveScopes(
      (name) => oauth().isScope(name),
      () => oauth().allScopes(),
    ),
    claims: { openid: ['sub'] },
    clientDefaults: {
      id_token_signed_response_alg: 'ES256',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    responseTypes: ['code'],
    pkce: { required: () => true },
    allowOmittingSingleRegisteredRedirectUri: false,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: false },
      revocation: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      resourceIndicators: { enabled: false },
    },
    routes: PROVIDER_ROUTES,
    issueRefreshToken: async (_ctx: unknown, client: ClientInstance) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => true,
    // Tokens outlive the browser session at the authorization server: logging out there is not revoking.
    expiresWithSession: async () => false,
    ttl: {
      AccessToken: () => settings().accessTtl,
      ClientCredentials: () => settings().accessTtl,
      RefreshToken: () => settings().refreshTtl,
      Grant: () => settings().refreshTtl,
      AuthorizationCode: () => 60,
      Interaction: () => 600,
      Session: () => 24 * 3600,
      IdToken: () => 3600,
    },
    findAccount: async (_ctx: unknown, sub: string) => {
      const account = accountParts(sub);
      if (!account || !(await setup.accounts.exists(account.user, account.host).catch(() => false))) return undefined;
      return { accountId: sub, claims: async () => ({ sub }) };
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `${setup.mount}/interaction/${interaction.uid}` },
    cookies: {
      keys: setup.keys.cookieKeys,
      names: { session: 'oauth_session', interaction: 'oauth_interaction', resume: 'oauth_interaction_resume' },
    },
    jwks: { keys: [setup.keys.signingKey] },
    // A browser application that registered a redirect URI may call the token endpoint from its origin.
    clientBasedCORS: (_ctx: unknown, origin: string, client: { redirectUris?: string[] }) =>
      (client.redirectUris ?? []).some((uri) => {
        try {
          return new URL(uri).origin === origin;
        } catch {
          return false;
        }
      }),
    renderError: async (ctx: HttpContext, out: { error?: string; error_description?: string }) => {
      errorPage(ctx, ctx.status >= 400 ? ctx.status : 400, out.error ?? 'server_error', out.error_description ?? 'the request could not be processed');
    },
  });
  // Client secrets are stored as scrypt hashes; oidc-provider hands us the hash it got from the adapter.
  provider.Client.prototype.compareClientSecret = async function (this: ClientInstance, actual: string) {
    return this.clientSecret !== undefined && (await verifySecret(actual, this.clientSecret));
  };
  provider.on('server_error', (_ctx: unknown, err: unknown) => logger.error({ err }, 'OAuth authorization server error'));
  return provider;
}
