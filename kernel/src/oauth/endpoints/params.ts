/**
 * Request parameters of the OAuth endpoints: the query of a GET, the urlencoded body of a POST. RFC 6749
 * §3.1 forbids sending a parameter twice, so a repeated one is an error rather than a silent pick.
 */
import { CommandError } from '@service/plugin-api';
import { readBodyText } from '@service/plugin-api';
import type { HttpContext } from '@service/plugin-api';
import { OAuthError } from './oauth-error.js';

/** Forms and token requests are small; a cap well below the listener's keeps abuse cheap. */
const FORM_LIMIT = 64 * 1024;

export type Params = ReadonlyMap<string, string>;

export function parseParams(text: string): Params {
  const out = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(text)) {
    if (out.has(name)) throw new OAuthError('invalid_request', `the parameter ${name} is repeated`);
    out.set(name, value);
  }
  return out;
}

export function queryParams(ctx: HttpContext): Params {
  return parseParams(ctx.querystring);
}

export async function formParams(ctx: HttpContext): Promise<Params> {
  const type = ctx.get('content-type');
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw new OAuthError('invalid_request', `the body must be application/x-www-form-urlencoded, not ${type || 'missing'}`);
  }
  const listenerLimit = ctx.state.listener.max_body_size;
  let text: string;
  try {
    text = await readBodyText(ctx, Math.min(FORM_LIMIT, listenerLimit));
  } catch (err) {
    // Answered as an OAuth error (JSON with no-store on the token endpoint, a page on the forms), naming the
    // limit that applied: usually this one, below the listener's max_body_size.
    if (err instanceof CommandError && err.kind === 'too_large') {
      const limit = FORM_LIMIT <= listenerLimit ? `${FORM_LIMIT} bytes, the limit of the OAuth endpoints` : `${listenerLimit} bytes (max_body_size of this listener)`;
      throw new OAuthError('invalid_request', `the request body exceeds ${limit}`, 413);
    }
    if (err instanceof CommandError && err.kind === 'bad_request') throw new OAuthError('invalid_request', err.message);
    throw err;
  }
  return parseParams(text);
}

/** A parameter that must be there and not empty. */
export function required(params: Params, name: string): string {
  const value = params.get(name);
  if (!value) throw new OAuthError('invalid_request', `the parameter ${name} is missing`);
  return value;
}

/**
 * The optional `ttl` (seconds) of ejabberd's forms. Any positive whole number is accepted: the lifetime is
 * capped by oauth_expire anyway, so a huge one means "as long as allowed" rather than an error.
 */
export function ttlParam(params: Params): number | undefined {
  const text = params.get('ttl');
  if (text === undefined || text === '') return undefined;
  if (!/^[0-9]+$/.test(text) || /^0+$/.test(text)) throw new OAuthError('invalid_request', `ttl must be a positive number of seconds, got '${text}'`);
  return Math.min(Number(text), Number.MAX_SAFE_INTEGER);
}
