/**
 * The server's open listeners, in configuration order: HTTP (the kernel's stack and its mounts), client streams
 * (TCP, with the TLS certificates loaded once per boot), and the kinds modules serve (service_xmlrpc…). Opened
 * at boot; matched against a reloaded configuration, where unchanged ones stay open; closed with the module that
 * served their kind. A `port: 0` listener keeps the port it was given across restarts, so clients reconnect.
 */
import { dirname, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { C2sListenerConfig, HttpListenerConfig, ListenerConfig } from '../config/listeners.js';
import type { Config } from '../config/load.js';
import type { HttpHandlerRegistry } from '../http/handlers.js';
import { startHttpListener } from '../http/listener.js';
import type { Logger } from '../log/logger.js';
import type { ListenerKinds } from '../modules/listener-kinds.js';
import { startC2sListener } from '../xmpp/c2s/listener.js';
import type { C2SEnvironment } from '../xmpp/c2s/stream.js';
import { certificateStore, loadCertificates, selfSignedCertificate, type CertificateStore } from '../xmpp/tls/certificates.js';

/** What one boot's listeners are opened with: that boot's configuration and services. */
export interface ListenerEnvironment {
  readonly config: Config;
  readonly http: HttpHandlerRegistry;
  readonly kinds: ListenerKinds;
  readonly c2s: C2SEnvironment;
  readonly logger: Logger;
}

interface RunningListener {
  readonly config: ListenerConfig;
  close(): Promise<void>;
  port(): number;
}

export class ListenerSet {
  #running: RunningListener[] = [];
  /** The ports `port: 0` listeners were given, by their place in `listen`. */
  readonly #boundPorts = new Map<number, number>();
  #certificates?: CertificateStore;

  constructor(private readonly environment: () => ListenerEnvironment) {}

  /** The bound port of each listener, in configuration order. */
  ports(): number[] {
    return this.#running.map((l) => l.port());
  }

  /** The port of the first listener of a kind. */
  portOf(module: ListenerConfig['module']): number | undefined {
    return this.#running.find((l) => l.config.module === module)?.port();
  }

  /** `kind:port` of each, for the start log. */
  describe(): string[] {
    return this.#running.map((l) => `${l.config.module}:${l.port()}`);
  }

  /** Opens the configuration's listeners one by one: those opened before a failure are closed by `closeAll`. */
  async openAll(): Promise<void> {
    for (const listener of this.environment().config.listen) this.#running.push(await this.#open(listener));
  }

  /** After a reload: keeps the listeners whose configuration did not change; restarts the others. */
  async reload(): Promise<void> {
    const { listen } = this.environment().config;
    const unmatched = [...this.#running];
    const next: Array<RunningListener | undefined> = [];
    for (const listener of listen) {
      const i = unmatched.findIndex((r) => isDeepStrictEqual(r.config, listener));
      next.push(i >= 0 ? { ...unmatched.splice(i, 1)[0]!, config: listener } : undefined);
    }
    for (const running of unmatched) await running.close();
    for (const [i, listener] of listen.entries()) next[i] ??= await this.#open(listener);
    this.#running = next as RunningListener[];
  }

  /** A module that served a listener kind stopped: its listeners go (reload_config opens them again). */
  async closeKind(kind: string): Promise<void> {
    const closing = this.#running.filter((l) => l.config.module === kind);
    this.#running = this.#running.filter((l) => l.config.module !== kind);
    for (const listener of closing) await listener.close().catch((err: unknown) => this.environment().logger.error({ err }, 'closing a listener failed'));
  }

  /** Closes every listener; the next boot loads the certificates again. */
  async closeAll(logger: Logger | undefined): Promise<void> {
    this.#certificates = undefined;
    for (const listener of this.#running.splice(0)) await listener.close().catch((err: unknown) => logger?.error({ err }, 'closing a listener failed'));
  }

  async #open(config: ListenerConfig): Promise<RunningListener> {
    const environment = this.environment();
    const { logger } = environment;
    const index = environment.config.listen.indexOf(config);
    const port = config.port === 0 ? (this.#boundPorts.get(index) ?? 0) : config.port;
    const effective = { ...config, port } as ListenerConfig;
    const certfile = effective.certfile ?? environment.config.certfiles[0];
    const opened = (open: { port(): number; close(): Promise<void> }): RunningListener => {
      if (config.port === 0) this.#boundPorts.set(index, open.port());
      return { config, close: () => open.close(), port: () => open.port() };
    };
    if (effective.module === 'service_http') {
      const http = await startHttpListener(effective as HttpListenerConfig, environment.http, logger, certfile);
      logger.info({ port: http.port(), ip: effective.ip, handlers: (effective as HttpListenerConfig).request_handlers }, 'listening for HTTP on %s port %d', effective.ip, http.port());
      return opened(http);
    }
    if (effective.module !== 'service_c2s') {
      // A kind a module serves (service_xmlrpc…).
      const start = environment.kinds.get(effective.module);
      if (!start) throw new Error(`listener on port ${config.port}: no running module serves the listener kind ${effective.module}`);
      const open = await start({ ...effective, ...(certfile ? { certfile } : {}) });
      logger.info({ port: open.port(), ip: effective.ip, kind: effective.module }, 'listening for %s on %s port %d', effective.module, effective.ip, open.port());
      return opened(open);
    }
    const c2sConfig = effective as C2sListenerConfig;
    const c2s = await startC2sListener(c2sConfig, environment.c2s, await this.#tls(environment));
    logger.info({ port: c2s.port(), ip: effective.ip, tls: effective.tls, starttls_required: c2sConfig.starttls_required }, 'listening for XMPP clients on %s port %d', effective.ip, c2s.port());
    return opened(c2s);
  }

  /** The TLS certificates of client streams: certfiles, or a generated self-signed one. Loaded once per boot. */
  async #tls({ config, logger }: ListenerEnvironment): Promise<CertificateStore> {
    if (!this.#certificates) {
      const files = config.certfiles.length ? config.certfiles.map((f) => resolve(dirname(config.file), f)) : [await selfSignedCertificate(config.dataDir, config.hosts, logger)];
      this.#certificates = certificateStore(await loadCertificates(files));
    }
    return this.#certificates;
  }
}
