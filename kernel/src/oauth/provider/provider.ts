/**
 * oidc-provider, configured as a plain OAuth 2.0 authorization server for the flows ejabberd lacks: the
 * authorization code grant with PKCE (S256, required), refresh tokens rotated on every use (a reused one
 * revokes its whole grant), and client_credentials. Its tokens land in the shared token store (adapter.ts);
 * its login and consent pages are ours (interaction.ts); revocation, introspection and the password and
 * implicit grants are served by our own endpoints, so every token answers to the same rules.
 */
import type { IncomingMessage } from 'node:http';
import type { AccountService } from '../../accounts/accounts.js';
import type { HttpContext } from '@service/plugin-api';
import type { Logger } from '../../log/logger.js';
import { tokenRefusal } from '../eligibility.js';
import { verifySecret } from '../secrets.js';
import type { OAuthService } from '../service.js';
import { errorPage } from '../endpoints/pages.js';
import { adapterClass } from './adapter.js';
import type { ProviderKeys } from './keys.js';
import { LiveScopes } from './live-scopes.js';
import type { ModelStore } from './model-store.js';
import { TokenErrors } from './token-errors.js';
import type Provider from 'oidc-provider';
import type { ClientInstance, OIDCProviderError, ProviderContext } from 'oidc-provider';

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

/** The caller's address as our listener established it (proxies considered), for ip rules of oauth_access. */
const clientIps = new WeakMap<IncomingMessage, string>();

export function rememberClientIp(req: IncomingMessage, ip: string): void {
  clientIps.set(req, ip);
}

function accountParts(accountId: string): { user: string; host: string } | undefined {
  const at = accountId.lastIndexOf('@');
  return at > 0 ? { user: accountId.slice(0, at), host: accountId.slice(at + 1) } : undefined;
}

export async function createProvider(setup: ProviderSetup): Promise<Provider> {
  routeProviderNotices(setup.logger);
  const { default: ProviderClass, errors, interactionPolicy } = await import('oidc-provider');
  const { oauth, settings, logger } = setup;
  const { Check } = interactionPolicy;
  const policy = interactionPolicy.base();
  // A sign-in whose account is gone or was registered again (findAccount found none) is no sign-in: it is
  // forgotten and the person logs in afresh. oidc-provider would otherwise ask for consent only, and fail
  // (500) on the missing account.
  policy.get('login')!.checks.add(
    new Check('account_unavailable', 'the signed-in account no longer exists', 'login_required', (ctx) => {
      const session = ctx.oidc?.session;
      if (!session?.accountId || ctx.oidc?.account) return Check.NO_NEED_TO_PROMPT;
      delete session.accountId;
      session.loginTs = undefined;
      session.authorizations = {};
      return Check.REQUEST_PROMPT;
    }),
    0,
  );
  const tokenErrors = new TokenErrors();
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
    // Asked whenever a session is used at /authorize and whenever a code or refresh token is redeemed: the
    // account must still exist (and be the one that signed in), not be banned, and pass oauth_access — at
    // every issuance, not only at login.
    findAccount: async (ctx: ProviderContext, sub: string, token?: { authTime?: number }) => {
      const account = accountParts(sub);
      if (!account) return undefined;
      const onTokenEndpoint = ctx.oidc?.route === 'token';
      const authTime = onTokenEndpoint ? token?.authTime : ctx.oidc?.session?.loginTs;
      const refusal = await tokenRefusal(setup.accounts, oauth(), account, { ip: clientIps.get(ctx.req), authTime });
      if (!refusal) return { accountId: sub, claims: async () => ({ sub }) };
      if (onTokenEndpoint) throw new errors.CustomOIDCProviderError('invalid_grant', refusal.message);
      // At /authorize: a gone account means a new login (the account_unavailable check); a refused one is told so.
      if (refusal.kind === 'missing' || refusal.kind === 'replaced') return undefined;
      throw new errors.AccessDenied(refusal.message);
    },
    interactions: { policy, url: (_ctx: unknown, interaction: { uid: string }) => `${setup.mount}/interaction/${interaction.uid}` },
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
  provider.on('grant.error', (ctx: unknown, err: unknown) => tokenErrors.record(ctx as ProviderContext, err as OIDCProviderError));
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path === PROVIDER_ROUTES.token) tokenErrors.rewrite(ctx);
  });
  return provider;
}
