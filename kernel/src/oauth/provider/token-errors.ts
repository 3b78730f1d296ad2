/**
 * The token endpoint's errors for the grants oidc-provider serves (authorization_code, refresh_token,
 * client_credentials), made to read like those of our own password grant:
 *
 * - error_description names the problem. oidc-provider says "grant request is invalid" for every
 *   invalid_grant and keeps the reason in `error_detail`, which it does not send; the client developer
 *   cannot tell a PKCE mismatch from a reused code.
 * - a grant type the client is not registered for is `unauthorized_client` (RFC 6749 §5.2), not
 *   `invalid_request`.
 * - `invalid_client` always carries our challenge: one realm for the whole endpoint, also when the client
 *   did not use HTTP Basic.
 *
 * The error codes themselves are oidc-provider's; only the wording and these two corrections change.
 */
import type { OIDCProviderError, ProviderContext } from 'oidc-provider';
import { CLIENT_CHALLENGE } from '../endpoints/oauth-error.js';

/** oidc-provider's error_detail (or, for PKCE, its cause's message) → what we say instead. */
const GRANT_PROBLEMS: Readonly<Record<string, string>> = {
  'authorization code not found': 'the authorization code is unknown or was revoked',
  'authorization code is expired': 'the authorization code has expired (a code is good for 60 seconds)',
  'authorization code already consumed': 'the authorization code was used already; the tokens issued for it are revoked',
  'authorization code redirect_uri mismatch': 'redirect_uri differs from the one of the authorization request',
  'code_verifier must be provided': 'code_verifier is missing: PKCE is required',
  'code_verifier does not match code_challenge': 'PKCE verification failed: code_verifier does not match the code_challenge of the authorization request',
  'client mismatch': 'the code or refresh token was issued to another client',
  'refresh token not found': 'the refresh token is unknown or was revoked',
  'refresh token is expired': 'the refresh token has expired',
  'refresh token already used': 'the refresh token was used already (each is good once): the whole grant is revoked',
  'grant not found': 'the authorization behind this code or refresh token was revoked',
  'grant is expired': 'the authorization behind this refresh token has expired',
  'authorization code invalid (referenced account not found)': 'the account this code was issued for no longer exists',
  'refresh token invalid (referenced account not found)': 'the account this refresh token was issued for no longer exists',
};

/** What oidc-provider answers when a client uses a grant type it is not registered for. */
const GRANT_TYPE_NOT_ALLOWED = 'requested grant type is not allowed for this client';

function detailOf(err: OIDCProviderError): string | undefined {
  if (err.error_detail) return err.error_detail;
  return err.cause instanceof Error ? err.cause.message : undefined;
}

/** The errors oidc-provider reported on the token route, per request, for rewriteTokenError to read. */
export class TokenErrors {
  readonly #errors = new WeakMap<object, OIDCProviderError>();

  /** For oidc-provider's `grant.error` event, which fires after the error body is written. */
  record(ctx: ProviderContext, err: OIDCProviderError): void {
    this.#errors.set(ctx, err);
  }

  /** Rewrites the JSON error body of a token request, if it is one (see the module comment). */
  rewrite(ctx: ProviderContext): void {
    const body = ctx.body as { error?: unknown; error_description?: unknown } | undefined;
    const err = this.#errors.get(ctx);
    if (!err || !body || typeof body !== 'object' || typeof body.error !== 'string') return;
    const clientId = ctx.oidc?.client?.clientId ?? String(ctx.oidc?.params?.client_id ?? '');
    const grantType = String(ctx.oidc?.params?.grant_type ?? '');
    if (body.error === 'invalid_request' && body.error_description === GRANT_TYPE_NOT_ALLOWED) {
      body.error = 'unauthorized_client';
      body.error_description = `the client '${clientId}' is not registered for grant_type '${grantType}'`;
      return;
    }
    if (body.error === 'invalid_client') {
      ctx.set('WWW-Authenticate', CLIENT_CHALLENGE);
      const detail = detailOf(err);
      if (detail) body.error_description = `client authentication failed: ${detail}`;
      return;
    }
    if (body.error === 'invalid_grant') {
      const detail = detailOf(err);
      if (detail) body.error_description = GRANT_PROBLEMS[detail] ?? detail;
    }
  }
}
