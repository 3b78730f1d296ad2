/**
 * The `service_oauth` request handler, mounted at `/oauth`:
 *
 *   authorization_token          the spec's implicit grant form (GET shows, POST submits)       ours
 *   token                        password grant                                                ours
 *                                authorization_code, refresh_token, client_credentials          oidc-provider
 *   authorize, interaction/<uid> the authorization code flow with PKCE; our login/consent page  oidc-provider + ours
 *   revoke, introspect           RFC 7009 and RFC 7662, for every token in the store            ours
 *   jwks, .well-known/…          keys and RFC 8414 metadata
 */
import type { IncomingMessage } from 'node:http';
import type Provider from 'oidc-provider';
import type { AccountService } from '../../accounts/accounts.js';
import type { LoginThrottle } from '../../accounts/login-throttle.js';
import type { HttpContext, HttpRequestHandler } from '@service/plugin-api';
import type { Logger } from '../../log/logger.js';
import { loadProviderKeys, type ProviderKeys } from '../provider/keys.js';
import { Interactions } from '../provider/interaction.js';
import type { ModelStore } from '../provider/model-store.js';
import { createProvider, rememberClientIp, type ProviderSettings } from '../provider/provider.js';
import { redirectUriProblem } from '../clients.js';
import { InvalidScope, splitScopes } from '../scopes.js';
import type { OAuthService } from '../service.js';
import { CsrfTokens } from './csrf.js';
import { ImplicitFlow } from './implicit-flow.js';
import { introspect } from './introspection.js';
import { authorizationServerMetadata } from './metadata.js';
import { errorPage, providerPageHeaders, redirectHeaders } from './pages.js';
import { OAuthError, sendOAuthError, sendOAuthJson } from './oauth-error.js';
import { formParams, type Params } from './params.js';
import { PasswordGrant } from './password-grant.js';
import { ResourceOwnerLogin } from './resource-owner.js';
import { revoke } from './revocation.js';

export const OAUTH_HANDLER = 'service_oauth';

export interface OAuthEndpointSettings extends ProviderSettings {
  /** oauth_issuer: the public URL of the mount; derived from the request's listener when unset. */
  readonly issuer: string | undefined;
}

export interface OAuthEndpointsEnv {
  readonly oauth: () => OAuthService;
  readonly accounts: AccountService;
  /** The server's failed-login limit, shared with every other way in. */
  readonly logins: LoginThrottle;
  readonly models: ModelStore;
  readonly dataDir: () => string;
  readonly hosts: () => readonly string[];
  readonly settings: () => OAuthEndpointSettings;
  readonly logger: Logger;
}

type Delegate = (req: IncomingMessage, res: import('node:http').ServerResponse) => Promise<void>;

/** Grants oidc-provider serves on the token endpoint. */
const PROVIDER_GRANTS = new Set(['authorization_code', 'refresh_token', 'client_credentials']);

export class OAuthEndpoints {
  readonly #implicit: ImplicitFlow;
  readonly #password: PasswordGrant;
  readonly #interactions: Interactions;
  readonly #providers = new Map<string, Promise<{ provider: Provider; callback: Delegate }>>();
  #keys?: Promise<ProviderKeys>;

  constructor(private readonly env: OAuthEndpointsEnv) {
    const owners = new ResourceOwnerLogin(env.accounts, env.oauth, env.logins);
    const csrf = new CsrfTokens();
    this.#implicit = new ImplicitFlow(env.oauth, csrf, owners, env.logger);
    this.#password = new PasswordGrant(env.oauth, owners, env.logger);
    this.#interactions = new Interactions(env.oauth, csrf, owners, env.accounts, env.logger);
  }

  handler(): HttpRequestHandler {
    return (ctx) => this.#route(ctx);
  }

  async #route(ctx: HttpContext): Promise<void> {
    const [first, second, ...rest] = ctx.state.segments;
    try {
      switch (first) {
        case 'authorization_token':
          if (second === undefined) return await this.#implicit.handle(ctx);
          break;
        case 'token':
          if (second === undefined) return await this.#token(ctx);
          break;
        case 'revoke':
          if (second === undefined) return await revoke(ctx, await this.#post(ctx), this.env.oauth(), this.env.models);
          break;
        case 'introspect':
          if (second === undefined) return await introspect(ctx, await this.#post(ctx), this.env.oauth(), this.#issuer(ctx));
          break;
        case 'authorize':
          // `/authorize/<uid>` is where oidc-provider resumes the flow after our login page.
          if (second !== undefined && rest.length > 0) break;
          // RFC 6749 §3.1 requires GET and leaves POST optional; a form_post is a response mode, not a
          // request method. Only GET is served, so the answer for another method says so.
          if (ctx.method !== 'GET') {
            ctx.set('Allow', 'GET');
            return errorPage(ctx, 405, 'invalid_request', `${ctx.method} is not served here: the authorization endpoint takes GET`);
          }
          providerPageHeaders(ctx);
          if (second === undefined) return await this.#authorize(ctx);
          return await this.#delegate(ctx, `/authorize/${encodeURIComponent(second)}`);
        case 'jwks':
          if (second !== undefined) break;
          if (ctx.method !== 'GET') {
            ctx.set('Allow', 'GET');
            throw new OAuthError('invalid_request', `${ctx.method} is not served here: use GET`, 405);
          }
          return await this.#delegate(ctx, '/jwks');
        case 'interaction':
          if (second !== undefined && rest.length === 0) return await this.#interactions.handle(ctx, (await this.#provider(ctx)).provider, second);
          break;
        case '.well-known':
          if ((second === 'oauth-authorization-server' || second === 'openid-configuration') && rest.length === 0) {
            return sendOAuthJson(ctx, 200, authorizationServerMetadata(this.#issuer(ctx), this.env.oauth().allScopes()));
          }
          break;
      }
    } catch (err) {
      if (err instanceof OAuthError) return sendOAuthError(ctx, err);
      throw err;
    }
    sendOAuthJson(ctx, 404, { error: 'not_found', error_description: `nothing is served at ${ctx.path}` });
  }

  /** The parameters of a POST endpoint; anything else is 405. */
  async #post(ctx: HttpContext): Promise<Params> {
    if (ctx.method !== 'POST') {
      ctx.set('Allow', 'POST');
      throw new OAuthError('invalid_request', `${ctx.method} is not served here: use POST`, 405);
    }
    return formParams(ctx);
  }

  async #token(ctx: HttpContext): Promise<void> {
    const params = await this.#post(ctx);
    const grantType = params.get('grant_type');
    if (!grantType) throw new OAuthError('invalid_request', 'the parameter grant_type is missing');
    if (grantType === 'password') return this.#password.handle(ctx, params);
    if (!PROVIDER_GRANTS.has(grantType)) {
      throw new OAuthError('unsupported_grant_type', `grant_type '${grantType}' is not supported: use password, authorization_code, refresh_token or client_credentials`);
    }
    this.#checkTokenScopes(grantType, params);
    await this.#checkSourceScopes(grantType, params);
    // oidc-provider holds each client to one authentication method; we accept Basic or the body for all.
    const body = new URLSearchParams([...params]);
    const secret = body.get('client_secret');
    if (secret !== null && !ctx.get('authorization')) {
      const id = body.get('client_id') ?? '';
      body.delete('client_secret');
      body.delete('client_id');
      const encode = (text: string) => encodeURIComponent(text);
      ctx.req.headers.authorization = `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`;
    }
    await this.#delegate(ctx, '/token', body.toString());
  }

  /**
   * The scope parameter, when there is one, must be valid now. client_credentials needs one, as every other
   * way to a token does: a token without scope would run nothing.
   */
  #checkTokenScopes(grantType: string, params: Params): void {
    const scope = params.get('scope');
    if (!scope && grantType !== 'client_credentials') return;
    try {
      this.env.oauth().checkScopes(splitScopes(scope ?? ''));
    } catch (err) {
      if (err instanceof InvalidScope) throw new OAuthError('invalid_scope', err.message);
      throw err;
    }
  }

  /**
   * A code or refresh token redeemed without a scope parameter asks for the scopes it was granted; oidc-provider
   * would re-issue them as they are, even a command whose module has been disabled since. Each must still be a
   * scope now, as on every other way to a token.
   */
  async #checkSourceScopes(grantType: string, params: Params): Promise<void> {
    if (params.get('scope')) return;
    let granted: string | undefined;
    let source: string;
    if (grantType === 'refresh_token') {
      const value = params.get('refresh_token');
      const record = value ? await this.env.oauth().tokens.lookup(value) : undefined;
      granted = record?.kind === 'refresh' ? record.scopes.join(' ') : undefined;
      source = 'refresh token';
    } else if (grantType === 'authorization_code') {
      const value = params.get('code');
      const code = value ? await this.env.models.find('AuthorizationCode', value) : undefined;
      granted = typeof code?.scope === 'string' ? code.scope : undefined;
      source = 'authorization code';
    } else {
      return;
    }
    if (!granted) return;
    try {
      this.env.oauth().checkScopes(splitScopes(granted));
    } catch (err) {
      if (err instanceof InvalidScope) throw new OAuthError('invalid_scope', `this ${source} was granted a scope that is no longer valid: ${err.message}`);
      throw err;
    }
  }

  /**
   * oidc-provider quietly drops scopes it does not know; the spec wants `invalid_scope`. So the scopes are
   * checked first, and once the client and its redirect URI are known good the client gets the error.
   */
  async #authorize(ctx: HttpContext): Promise<void> {
    const query = new URLSearchParams(ctx.querystring);
    const scopes = splitScopes(query.get('scope') ?? '');
    const oauth = this.env.oauth();
    const unknown = scopes.filter((scope) => !oauth.isScope(scope));
    const redirectUri = query.get('redirect_uri');
    const client = await oauth.clients.get(query.get('client_id') ?? '');
    // A client stored before its redirect URI would be refused (javascript:…) is never redirected to; the person
    // is told why, rather than oidc-provider's words on the client's metadata.
    const stale = client?.redirectUri !== undefined ? redirectUriProblem(client.redirectUri) : undefined;
    if (stale) return errorPage(ctx, 400, 'invalid_request', `the redirect URI registered for the client '${client!.clientId}' is not allowed (${stale}): the client must be registered again`);
    if (unknown.length && redirectUri && client?.redirectUri === redirectUri && this.env.settings().clientsAllowed) {
      const target = new URL(redirectUri);
      target.searchParams.set('error', 'invalid_scope');
      target.searchParams.set('error_description', new InvalidScope(unknown).message);
      target.searchParams.set('state', query.get('state') ?? '');
      target.searchParams.set('iss', this.#issuer(ctx));
      redirectHeaders(ctx);
      return ctx.redirect(target.href);
    }
    return this.#delegate(ctx, '/authorize');
  }

  /** Hands the request to oidc-provider with the path below the mount; `body` replaces one already read. */
  async #delegate(ctx: HttpContext, path: string, body?: string): Promise<void> {
    const { callback } = await this.#provider(ctx);
    const req = ctx.req as IncomingMessage & { originalUrl?: string; body?: string };
    rememberClientIp(req, ctx.state.ip);
    const query = ctx.querystring ? `?${ctx.querystring}` : '';
    req.originalUrl = `${ctx.state.mount.replace(/\/$/, '')}${path}${query}`;
    req.url = `${path}${query}`;
    if (body !== undefined) {
      req.body = body;
      req.headers['content-length'] = String(Buffer.byteLength(body));
    }
    ctx.respond = false;
    await callback(req, ctx.res);
  }

  #issuer(ctx: HttpContext): string {
    const configured = this.env.settings().issuer;
    if (configured) return configured.replace(/\/$/, '');
    const port = ctx.req.socket.localPort;
    const defaultPort = ctx.protocol === 'https' ? 443 : 80;
    const host = this.env.hosts()[0] ?? 'localhost';
    return `${ctx.protocol}://${host}${port && port !== defaultPort ? `:${port}` : ''}${ctx.state.mount.replace(/\/$/, '')}`;
  }

  #provider(ctx: HttpContext): Promise<{ provider: Provider; callback: Delegate }> {
    const issuer = this.#issuer(ctx);
    let entry = this.#providers.get(issuer);
    if (!entry) {
      this.#keys ??= loadProviderKeys(this.env.dataDir());
      entry = this.#keys.then(async (keys) => {
        const provider = await createProvider({
          issuer,
          mount: ctx.state.mount.replace(/\/$/, ''),
          keys,
          oauth: this.env.oauth,
          accounts: this.env.accounts,
          models: this.env.models,
          settings: this.env.settings,
          logger: this.env.logger,
        });
        return { provider, callback: provider.callback() };
      });
      entry.catch(() => this.#providers.delete(issuer));
      this.#providers.set(issuer, entry);
    }
    return entry;
  }
}
