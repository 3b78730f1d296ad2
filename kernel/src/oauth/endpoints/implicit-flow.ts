/**
 * `/oauth/authorization_token`, the spec's authorization endpoint (the implicit grant, as ejabberd serves it):
 * GET shows a form naming the application and the scopes; POST with the person's JID and password redirects
 * to redirect_uri with access_token, token_type=bearer, expires_in, scope (joined with '+') and state.
 *
 * Errors follow RFC 6749 §4.2.2.1: when the client or its redirect URI cannot be trusted the person gets an
 * error page and no redirect; any other error goes back to the client as `error=…&state=…`.
 */
import type { HttpContext } from '@service/plugin-api';
import type { Logger } from '../../log/logger.js';
import { InvalidScope, splitScopes } from '../scopes.js';
import type { OAuthService } from '../service.js';
import { checkImplicitClient } from './client-policy.js';
import type { CsrfTokens } from './csrf.js';
import { OAuthError } from './oauth-error.js';
import { authorizationPage, errorPage, redirectHeaders } from './pages.js';
import { formParams, queryParams, ttlParam, type Params } from './params.js';
import { refusedLoginStatus, type ResourceOwnerLogin } from './resource-owner.js';

/** What the form carries from the GET to the POST. */
const REQUEST_FIELDS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'ttl'] as const;
/**
 * What its CSRF token is bound to: the request but its `ttl`. ejabberd's form lets the person choose the
 * lifetime, so a `ttl` field added or changed on the way is theirs to set; it can only be shorter than
 * oauth_expire, never grant more.
 */
const BOUND_FIELDS = REQUEST_FIELDS.filter((name) => name !== 'ttl');

function redirect(ctx: HttpContext, target: URL, values: Record<string, string>): void {
  const url = new URL(target);
  // URLSearchParams writes a space as '+': the granted scopes arrive joined with '+', as the spec shows them.
  for (const [name, value] of Object.entries(values)) url.searchParams.set(name, value);
  redirectHeaders(ctx);
  ctx.status = 302;
  ctx.redirect(url.href);
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = '<!DOCTYPE html><title>302 Found</title><h1>302 Found</h1>';
}

export class ImplicitFlow {
  constructor(
    private readonly oauth: () => OAuthService,
    private readonly csrf: CsrfTokens,
    private readonly owners: ResourceOwnerLogin,
    private readonly logger: Logger,
  ) {}

  async handle(ctx: HttpContext): Promise<void> {
    if (ctx.method !== 'GET' && ctx.method !== 'POST') {
      ctx.set('Allow', 'GET, POST');
      return errorPage(ctx, 405, 'invalid_request', `${ctx.method} is not served here: GET shows the form, POST submits it`);
    }
    let params: Params;
    try {
      params = ctx.method === 'GET' ? queryParams(ctx) : await formParams(ctx);
    } catch (err) {
      if (err instanceof OAuthError) return errorPage(ctx, err.status, err.code, err.description);
      throw err;
    }
    const oauth = this.oauth();
    const client = await checkImplicitClient(oauth, params.get('client_id'), params.get('redirect_uri'));
    if (!client.ok) return errorPage(ctx, 400, 'invalid_request', client.description);
    const state = params.get('state') ?? '';
    const fail = (error: string, description: string) => redirect(ctx, client.redirectUri, { error, error_description: description, state });

    const responseType = params.get('response_type');
    if (responseType !== 'token') {
      return fail(responseType ? 'unsupported_response_type' : 'invalid_request', responseType ? `response_type must be 'token', not '${responseType}'` : 'the parameter response_type is missing');
    }
    let scopes: string[];
    let ttl: number | undefined;
    try {
      scopes = oauth.checkScopes(splitScopes(params.get('scope') ?? ''));
      ttl = ttlParam(params);
    } catch (err) {
      if (err instanceof InvalidScope) return fail('invalid_scope', err.message);
      if (err instanceof OAuthError) return fail(err.code, err.description);
      throw err;
    }
    const bound = BOUND_FIELDS.map((name) => params.get(name) ?? '');
    const show = (status: number, error?: string, username?: string) =>
      authorizationPage(ctx, status, {
        action: `${ctx.state.mount.replace(/\/$/, '')}/authorization_token`,
        application: client.application,
        scopes: scopes.map((scope) => ({ scope, description: oauth.describeScope(scope) })),
        hidden: [...REQUEST_FIELDS.filter((name) => params.has(name)).map((name) => [name, params.get(name)!] as const), ['csrf_token', this.csrf.issue(bound)]],
        username,
        error,
        redirectUri: client.redirectUri,
      });
    if (ctx.method === 'GET') return show(200);

    const refusal = this.csrf.check(ctx.req.headers, params.get('csrf_token'), bound);
    if (refusal) return show(403, refusal, params.get('username'));
    if (params.has('deny')) return fail('access_denied', 'the person refused the authorization');
    const outcome = await this.owners.login(params.get('username') ?? '', params.get('password') ?? '', ctx.state.ip);
    if (!outcome.ok) {
      if (outcome.reason === 'denied') return fail('access_denied', outcome.message);
      if (outcome.retryAfter !== undefined) ctx.set('Retry-After', String(outcome.retryAfter));
      return show(refusedLoginStatus(outcome.reason), outcome.message, params.get('username'));
    }
    const issued = await oauth.tokens.issue({ account: outcome.account, scopes, ttl, clientId: params.get('client_id') });
    this.logger.info({ tokenId: issued.id, client: params.get('client_id'), user: outcome.account.user, host: outcome.account.host }, 'OAuth token granted on the authorization form');
    redirect(ctx, client.redirectUri, {
      access_token: issued.token,
      token_type: 'bearer',
      expires_in: String(issued.expiresIn),
      scope: issued.scopes.join(' '),
      state,
    });
  }
}
