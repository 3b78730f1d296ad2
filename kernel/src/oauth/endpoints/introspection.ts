/**
 * `/oauth/introspect` (RFC 7662) for every token in the store: a confidential client (one with a secret)
 * learns whether a token is active, and if so its scopes, owner, client and times. Anything not active —
 * unknown, expired, revoked, or a refresh token already used — is just `{"active": false}`.
 */
import type { HttpContext } from '@service/plugin-api';
import type { OAuthService } from '../service.js';
import { authenticateClient } from './client-auth.js';
import { OAuthError, sendOAuthJson } from './oauth-error.js';
import { required, type Params } from './params.js';

export async function introspect(ctx: HttpContext, params: Params, oauth: OAuthService, issuer: string): Promise<void> {
  const client = await authenticateClient(oauth, ctx, params);
  if (!client?.hasSecret) throw new OAuthError('invalid_client', 'introspection is for confidential clients: authenticate with client_id and client_secret');
  const value = required(params, 'token');
  const record = await oauth.tokens.lookup(value);
  if (!record || record.expiresAt <= Date.now() || record.consumed) return sendOAuthJson(ctx, 200, { active: false });
  const owner = record.account ? `${record.account.user}@${record.account.host}` : undefined;
  sendOAuthJson(ctx, 200, {
    active: true,
    scope: record.scopes.join(' '),
    client_id: record.clientId,
    username: owner,
    sub: owner,
    token_type: record.kind === 'refresh' ? 'refresh_token' : 'Bearer',
    exp: Math.floor(record.expiresAt / 1000),
    iat: Math.floor(record.createdAt / 1000),
    iss: issuer,
    jti: record.id,
  });
}
