/**
 * `grant_type=password` on `/oauth/token`, as ejabberd serves it: `username` (a JID), `password`, `scope`
 * (space-separated) and an optional `ttl`; the client is checked per oauth_client_id_check. The answer is
 * RFC 6749's JSON: access_token, token_type, expires_in, scope.
 */
import type { HttpContext } from '@service/plugin-api';
import type { Logger } from '../../log/logger.js';
import { InvalidScope, splitScopes } from '../scopes.js';
import type { OAuthService } from '../service.js';
import { checkPasswordGrantClient } from './client-policy.js';
import { OAuthError, sendOAuthJson } from './oauth-error.js';
import { required, ttlParam, type Params } from './params.js';
import type { ResourceOwnerLogin } from './resource-owner.js';

export class PasswordGrant {
  constructor(
    private readonly oauth: () => OAuthService,
    private readonly owners: ResourceOwnerLogin,
    private readonly logger: Logger,
  ) {}

  async handle(ctx: HttpContext, params: Params): Promise<void> {
    const oauth = this.oauth();
    const clientId = await checkPasswordGrantClient(oauth, ctx, params);
    const username = required(params, 'username');
    const password = required(params, 'password');
    let scopes: string[];
    try {
      scopes = oauth.checkScopes(splitScopes(params.get('scope') ?? ''));
    } catch (err) {
      if (err instanceof InvalidScope) throw new OAuthError('invalid_scope', err.message);
      throw err;
    }
    const ttl = ttlParam(params);
    const outcome = await this.owners.login(username, password, ctx.state.ip);
    if (!outcome.ok) {
      if (outcome.reason === 'blocked') throw new OAuthError('temporarily_unavailable', outcome.message, 429, outcome.retryAfter);
      if (outcome.reason === 'banned') throw new OAuthError('access_denied', outcome.message, 403, outcome.retryAfter);
      if (outcome.reason === 'malformed') throw new OAuthError('invalid_request', outcome.message);
      throw new OAuthError('invalid_grant', outcome.message);
    }
    const issued = await oauth.tokens.issue({ account: outcome.account, scopes, ttl, clientId });
    this.logger.info({ tokenId: issued.id, client: clientId, user: outcome.account.user, host: outcome.account.host }, 'OAuth token granted for a password');
    sendOAuthJson(ctx, 200, {
      access_token: issued.token,
      token_type: 'bearer',
      expires_in: issued.expiresIn,
      scope: issued.scopes.join(' '),
    });
  }
}
