/**
 * What an HTTP request handler sees. The `service_http` listener routes a request to the handler mounted
 * at the longest matching `request_handlers` prefix; handlers are registered by name (a module's name, or
 * a kernel handler such as service_oauth) and looked up per request, so a module that stops takes its
 * routes with it.
 */
import type { ParameterizedContext } from 'koa';
import type { HttpListenerConfig } from '../config/listeners.js';

export interface HttpState {
  /** The request_handlers prefix that matched, e.g. `/api`. */
  readonly mount: string;
  /** The path below the mount, split on `/`, percent-decoded, without empty segments. */
  readonly segments: readonly string[];
  readonly listener: HttpListenerConfig;
  /** Also sent back in the `X-Request-Id` header. */
  readonly requestId: string;
  /** The peer address, IPv4-mapped IPv6 unwrapped. */
  readonly ip: string;
}

export type HttpContext = ParameterizedContext<HttpState>;

export type HttpRequestHandler = (ctx: HttpContext) => Promise<void>;
