/**
 * Client authentication for revocation (RFC 7009) and introspection (RFC 7662): a registered client, with
 * its secret when it has one. No client at all is `undefined`; a wrong one is `invalid_client`.
 */
import type { HttpContext } from '@service/plugin-api';
import type { OAuthClient } from '../clients.js';
import type { OAuthService } from '../service.js';
import { clientCredentials } from './client-policy.js';
import { OAuthError } from './oauth-error.js';
import type { Params } from './params.js';

export async function authenticateClient(oauth: OAuthService, ctx: HttpContext, params: Params): Promise<OAuthClient | undefined> {
  const { clientId, secret } = clientCredentials(ctx, params);
  if (!clientId) return undefined;
  if (oauth.clientIdCheck === 'deny') throw new OAuthError('invalid_client', 'this server accepts no OAuth clients (oauth_client_id_check: deny)');
  const client = await oauth.clients.get(clientId);
  if (!client) throw new OAuthError('invalid_client', `'${clientId}' is not a registered OAuth client`);
  if (client.hasSecret && !(await oauth.clients.verifySecret(clientId, secret))) {
    throw new OAuthError('invalid_client', `wrong or missing secret for the client '${clientId}'`);
  }
  return client;
}
