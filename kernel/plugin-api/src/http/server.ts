/**
 * Opening an HTTP port for a module's own listener kind (XML-RPC on its own port): the server's HTTP stack
 * (request ids, timeouts, body limits, TLS from certfiles, the JSON error envelope) in front of one handler.
 */
import type { ListenerCommonConfig, OpenListener } from '../module/listeners.js';
import type { HttpRequestHandler } from './types.js';

export interface HttpServeConfig extends ListenerCommonConfig {
  /** Largest accepted request body, in bytes (413 beyond). */
  readonly max_body_size: number;
  /** Seconds a client has to send a whole request (408 beyond). */
  readonly request_timeout: number;
}

export interface HttpServerApi {
  /** Opens a listener whose every path goes to `handler`. */
  serve(config: HttpServeConfig, handler: HttpRequestHandler): Promise<OpenListener>;
}
