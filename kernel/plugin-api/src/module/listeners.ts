/**
 * Listener kinds a module adds to the `listen:` section (ejabberd's listener modules): the module declares the
 * kind and its options statically, so a configuration is validated before anything starts, and hands the
 * server a function that opens the port with a validated configuration. The server's own kinds are
 * service_c2s and service_http.
 */
import type { OptionsSchema } from '../config/options.js';

/** The options every listener has, whatever its kind. */
export interface ListenerCommonConfig {
  readonly port: number;
  readonly ip: string;
  /** The kind (ejabberd's listener `module`). */
  readonly module: string;
  /** A label for api_permissions `from: [{tag: …}]`. */
  readonly tag?: string;
  /** Direct TLS on this port. */
  readonly tls: boolean;
  /** PEM certificate and key for this listener (resolved path); the server's certfiles when absent. */
  readonly certfile?: string;
}

export interface ListenerKindDecl {
  /** The kind's own options, beyond port, ip, module, tag, tls and certfile. */
  readonly options?: OptionsSchema;
  /** One or two sentences for the configuration reference. */
  readonly doc: string;
}

/** An open port: what the server needs to report it and close it. */
export interface OpenListener {
  port(): number;
  close(): Promise<void>;
}

/** Opens a listener of a module's kind with its validated configuration (common options and the kind's own). */
export type ListenerStarter = (config: ListenerCommonConfig & Readonly<Record<string, unknown>>) => Promise<OpenListener>;
