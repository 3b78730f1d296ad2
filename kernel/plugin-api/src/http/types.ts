/**
 * What an HTTP request handler sees (koa's context). The `service_http` listener routes a request to the
 * handler mounted at the longest matching `request_handlers` prefix; handlers are registered by name (a
 * module's, or a server handler such as service_oauth) and looked up per request, so a module that stops takes
 * its routes with it.
 */
import type { ParameterizedContext } from 'koa';

/** The listener a request arrived on, as its configuration says. */
export interface HttpListenerInfo {
  readonly port: number;
  readonly ip: string;
  readonly tls: boolean;
  /** Request bodies larger than this are refused with 413. */
  readonly max_body_size: number;
  /** A label for api_permissions `from: [{tag: …}]`. */
  readonly tag?: string;
}

export interface HttpState {
  /** The request_handlers prefix that matched, e.g. `/api`. */
  readonly mount: string;
  /** The path below the mount, split on `/`, percent-decoded, without empty segments. */
  readonly segments: readonly string[];
  readonly listener: HttpListenerInfo;
  /** Also sent back in the `X-Request-Id` header. */
  readonly requestId: string;
  /** The peer address, IPv4-mapped IPv6 unwrapped. */
  readonly ip: string;
}

export type HttpContext = ParameterizedContext<HttpState>;

export type HttpRequestHandler = (ctx: HttpContext) => Promise<void>;
