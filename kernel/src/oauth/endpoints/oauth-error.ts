/**
 * OAuth errors as RFC 6749 §5.2 writes them: a JSON body {error, error_description}, `Cache-Control:
 * no-store`, and for a client that failed to authenticate a 401 with `WWW-Authenticate`.
 */
import type { HttpContext } from '@service/plugin-api';

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'temporarily_unavailable';

export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly status = code === 'invalid_client' ? 401 : code === 'temporarily_unavailable' ? 429 : 400,
    /** Seconds, for a rate-limited request. */
    readonly retryAfter?: number,
  ) {
    super(`${code}: ${description}`);
    this.name = 'OAuthError';
  }
}

/** The challenge of a client that failed to authenticate, the same on every path of the token endpoint. */
export const CLIENT_CHALLENGE = 'Basic realm="service_oauth", error="invalid_client"';

export function noStore(ctx: HttpContext): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
}

export function sendOAuthJson(ctx: HttpContext, status: number, body: Record<string, unknown>): void {
  noStore(ctx);
  // An error body may echo what the request said; a browser must read it as JSON and nothing else.
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.status = status;
  ctx.type = 'application/json;charset=UTF-8';
  ctx.body = JSON.stringify(body);
}

export function sendOAuthError(ctx: HttpContext, error: OAuthError): void {
  if (error.status === 401) ctx.set('WWW-Authenticate', CLIENT_CHALLENGE);
  if (error.retryAfter !== undefined) ctx.set('Retry-After', String(error.retryAfter));
  sendOAuthJson(ctx, error.status, { error: error.code, error_description: error.description });
}
