/**
 * `/oauth/revoke` (RFC 7009) for every token in the store, whichever flow issued it. A confidential client
 * authenticates and revokes tokens issued to it; without client credentials, holding the token is enough,
 * unless it was issued to a confidential client. Revoking a refresh token ends its whole grant. Unknown
 * and expired tokens are answered 200 like revoked ones (§2.2): the answer tells nothing about a token.
 */
import type { HttpContext } from '@service/plugin-api';
import type { ModelStore } from '../provider/model-store.js';
import type { OAuthService } from '../service.js';
import { authenticateClient } from './client-auth.js';
import { OAuthError, noStore } from './oauth-error.js';
import { required, type Params } from './params.js';

export async function revoke(ctx: HttpContext, params: Params, oauth: OAuthService, models: ModelStore): Promise<void> {
  const client = await authenticateClient(oauth, ctx, params);
  const value = required(params, 'token');
  const record = await oauth.tokens.lookup(value);
  if (record) {
    if (client && record.clientId !== client.clientId) {
      throw new OAuthError('unauthorized_client', `this token was not issued to the client '${client.clientId}'`);
    }
    if (!client && record.clientId) {
      const owner = await oauth.clients.get(record.clientId);
      if (owner?.hasSecret) throw new OAuthError('invalid_client', `this token belongs to the client '${record.clientId}', which must authenticate to revoke it`, 401);
    }
    if (record.kind === 'refresh' && record.grantId) {
      await oauth.tokens.revokeWhere({ grantId: record.grantId });
      await models.revokeByGrantId(record.grantId);
      await models.destroy('Grant', record.grantId);
    }
    await oauth.tokens.revokeValue(value);
  }
  noStore(ctx);
  ctx.status = 200;
  ctx.body = '';
}
