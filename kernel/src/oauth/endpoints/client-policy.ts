/**
 * oauth_client_id_check applied to the ejabberd-style flows:
 *
 *   db (default)  only registered clients: an implicit client with its exact redirect URI on the
 *                 authorization form, a password client with its secret on the token endpoint;
 *   allow         any client_id; a registered client is still held to its redirect URI and its secret;
 *   deny          no client at all: both flows are closed.
 */
import type { HttpContext } from '@service/plugin-api';
import { redirectUriProblem } from '../clients.js';
import type { OAuthService } from '../service.js';
import { OAuthError } from './oauth-error.js';
import type { Params } from './params.js';

export type ImplicitClientCheck =
  | { readonly ok: true; readonly application: string; readonly redirectUri: URL }
  | { readonly ok: false; readonly description: string };

export async function checkImplicitClient(oauth: OAuthService, clientId: string | undefined, redirectUri: string | undefined): Promise<ImplicitClientCheck> {
  if (!clientId) return { ok: false, description: 'the request has no client_id' };
  if (!redirectUri) return { ok: false, description: 'the request has no redirect_uri' };
  const problem = redirectUriProblem(redirectUri);
  if (problem) return { ok: false, description: problem };
  const url = new URL(redirectUri);
  const check = oauth.clientIdCheck;
  if (check === 'deny') return { ok: false, description: 'this server accepts no OAuth clients (oauth_client_id_check: deny)' };
  const client = await oauth.clients.get(clientId);
  if (!client) {
    if (check === 'db') return { ok: false, description: `'${clientId}' is not a registered OAuth client` };
    return { ok: true, application: clientId, redirectUri: url };
  }
  if (client.grantType !== 'implicit' || client.redirectUri === undefined) {
    return { ok: false, description: `the client '${clientId}' is not registered for the implicit grant` };
  }
  if (client.redirectUri !== redirectUri) return { ok: false, description: `redirect_uri does not match the one registered for '${clientId}'` };
  return { ok: true, application: client.clientName, redirectUri: url };
}

/** RFC 6749 §2.3.1: client credentials in HTTP Basic (each part form-urlencoded) or in the body, not both. */
export function clientCredentials(ctx: HttpContext, params: Params): { clientId?: string; secret?: string } {
  const header = ctx.get('authorization');
  const bodyId = params.get('client_id');
  const bodySecret = params.get('client_secret');
  if (!header) return { clientId: bodyId || undefined, secret: bodySecret };
  const [scheme, value = ''] = header.split(/\s+/, 2);
  if (scheme!.toLowerCase() !== 'basic') throw new OAuthError('invalid_client', `unsupported client authentication scheme '${scheme}': use Basic`);
  if (bodySecret !== undefined) throw new OAuthError('invalid_request', 'the client authenticated twice: use HTTP Basic or client_secret in the body, not both');
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) throw new OAuthError('invalid_client', 'malformed HTTP Basic client credentials');
  const decode = (text: string) => {
    try {
      return decodeURIComponent(text.replace(/\+/g, ' '));
    } catch {
      throw new OAuthError('invalid_client', 'malformed HTTP Basic client credentials');
    }
  };
  const clientId = decode(decoded.slice(0, colon));
  if (bodyId && bodyId !== clientId) throw new OAuthError('invalid_request', 'client_id in the body differs from the authenticated client');
  return { clientId, secret: decode(decoded.slice(colon + 1)) };
}

/** The client of a password-grant request, checked; throws invalid_client / unauthorized_client. */
export async function checkPasswordGrantClient(oauth: OAuthService, ctx: HttpContext, params: Params): Promise<string | undefined> {
  const { clientId, secret } = clientCredentials(ctx, params);
  const check = oauth.clientIdCheck;
  if (check === 'deny') throw new OAuthError('invalid_client', 'this server accepts no OAuth clients (oauth_client_id_check: deny)');
  if (!clientId) {
    if (check === 'allow') return undefined;
    throw new OAuthError('invalid_client', 'the client is not identified: send client_id and client_secret (HTTP Basic or body)');
  }
  const client = await oauth.clients.get(clientId);
  if (!client) {
    if (check === 'allow') return clientId;
    throw new OAuthError('invalid_client', `'${clientId}' is not a registered OAuth client`);
  }
  if (!client.hasSecret) throw new OAuthError('unauthorized_client', `the client '${clientId}' is registered for the implicit grant, not the password grant`);
  if (!(await oauth.clients.verifySecret(clientId, secret))) throw new OAuthError('invalid_client', `wrong or missing secret for the client '${clientId}'`);
  return clientId;
}
