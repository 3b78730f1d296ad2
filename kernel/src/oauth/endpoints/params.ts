/**
 * Request parameters of the OAuth endpoints: the query of a GET, the urlencoded body of a POST. RFC 6749
 * §3.1 forbids sending a parameter twice, so a repeated one is an error rather than a silent pick.
 */
import { readBodyText } from '../../http/body.js';
import type { HttpContext } from '../../http/types.js';
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
  return parseParams(await readBodyText(ctx, Math.min(FORM_LIMIT, ctx.state.listener.max_body_size)));
}

/** A parameter that must be there and not empty. */
export function required(params: Params, name: string): string {
  const value = params.get(name);
  if (!value) throw new OAuthError('invalid_request', `the parameter ${name} is missing`);
  return value;
}

/** The optional `ttl` (seconds) of ejabberd's forms. */
export function ttlParam(params: Params): number | undefined {
  const text = params.get('ttl');
  if (text === undefined || text === '') return undefined;
  if (!/^[1-9][0-9]{0,9}$/.test(text)) throw new OAuthError('invalid_request', `ttl must be a positive number of seconds, got '${text}'`);
  return Number(text);
}
