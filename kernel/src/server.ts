/**
 * The server: reads the configuration, opens storage, creates the kernel services, registers the kernel's
 * commands, starts the modules and the listeners; and stops, restarts and reloads all of it. It composes; the
 * parts it wires live with their subjects: the listeners (listeners/listener-set.ts), the OAuth server
 * (oauth/wiring.ts), client streams (xmpp/c2s/environment.ts), the documentation (docs/command-docs.ts).
 */
import { asValue, createContainer, type AwilixContainer } from 'awilix';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { AccountService } from './accounts/accounts.js';
import { LoginThrottle } from './accounts/login-throttle.js';
import { ACCOUNT_MIGRATIONS } from './accounts/migrations.js';
import { PBKDF2_IMPLEMENTATION, scramHashesOf } from './accounts/scram.js';
import { ownSocketProblem } from './workers/own-socket.js';
import { CommandBus } from './commands/bus.js';
import { CommandRegistry } from './commands/registry.js';
import type { ListenerConfig } from './config/listeners.js';
import type { CommandDoc } from '@service/plugin-api';
import { loadConfigFile, parseConfig, type Config, type ConfigContext } from './config/load.js';
import { ControlServer } from './ctl/control-server.js';
import { CONTROL_SOCKET } from './ctl/protocol.js';
import { HookBus } from './hooks/hooks.js';
import { HttpAuthenticator } from './http/authenticate.js';
import { HttpHandlerRegistry } from './http/handlers.js';
import { singleHandlerServer } from './http/listener.js';
import { LogService } from './log/log-service.js';
import type { Logger } from './log/logger.js';
import { kernelCommandHandlers } from './kernel-commands/index.js';
import { NODE_MIGRATIONS, NodeIdentity } from './node/identity.js';
import { OAUTH_MIGRATIONS } from './oauth/migrations.js';
import { OAUTH_HANDLER } from './oauth/endpoints/handler.js';
import { attachOAuth, createOAuthService } from './oauth/wiring.js';
import { attachClientStreams } from './xmpp/c2s/environment.js';
import type { C2SEnvironment } from './xmpp/c2s/stream.js';
import { WEBSOCKET_HANDLER, type WebSocketEndpoint } from './xmpp/c2s/websocket.js';
import { XmppService } from './xmpp/service.js';
import { ListenerSet } from './listeners/listener-set.js';
import { commandDocs, documentationApi } from './docs/command-docs.js';
import { ModuleCatalog } from './modules/catalog.js';
import { ListenerKinds } from './modules/listener-kinds.js';
import { desiredModules } from './modules/desired.js';
import { ModuleManager } from './modules/manager.js';
import { shareServerPackages } from './modules/plugin-resolution.js';
import { ScopeRegistry } from './modules/scopes.js';
import type { KernelServices, ServerControl } from './modules/services.js';
import { Storage, type DbKind } from './storage/database.js';
import { applyInstalledFallback } from './data/embedded/fallback.js';
import { dropStaleState } from './data/embedded/replace.js';
import { KERNEL_VERSION } from './version.js';
import { ModuleAdministration } from './modules/administration.js';
import { PortabilityRegistry } from './modules/portability-registry.js';
import { SharedCaches } from './caches/shared-caches.js';
import { PluginInstaller, type ModuleRuntime } from './plugins/installer.js';
import { pluginSettings } from './plugins/settings.js';
import { workersControl } from './workers/control.js';
import { ProcessChannels } from './workers/channels.js';
import { ServerNodes } from './node/nodes.js';
import type { ServerAction } from './workers/messages.js';
import { WorkerLink, type ServerActions, type WorkerIdentity } from './workers/worker-link.js';

/** What validating a configuration needs: the modules it may name, and the kernel's request handlers. */
function configContext(): ConfigContext {
  return { modules: (dataDir) => new ModuleCatalog(BUILTIN_MODULES_DIR, join(dataDir, 'plugins')), kernelHandlers: KERNEL_HANDLERS };
}

/** Request handlers served by the kernel itself; modules add theirs by name. */
export const KERNEL_HANDLERS: readonly string[] = [WEBSOCKET_HANDLER, OAUTH_HANDLER];

const TOKEN_PURGE_INTERVAL_MS = 10 * 60 * 1000;

/** The built-in modules live next to the kernel package in the repository. */
export const BUILTIN_MODULES_DIR = fileURLToPath(new URL('../../modules/', import.meta.url));

export interface ServerOptions {
  readonly configFile: string;
  /** Log to this logger instead of the configured file (tests). */
  readonly logger?: Logger;
  /** Also log to stdout (the foreground). */
  readonly stdout?: boolean;
  /** Pretty stdout logs (a terminal). */
  readonly pretty?: boolean;
  /** Called when a command stops or halts the server: exit the process with this status. */
  readonly onExit?: (status: number) => void;
  /**
   * Maintenance: configuration, log, storage and the kernel's commands only — no modules, listeners or
   * control socket. servicectl uses it to run the commands that work (or must run) with the server stopped.
   */
  readonly maintenance?: boolean;
  /** This process is one of several workers (the `workers` option; the primary started it). */
  readonly worker?: WorkerIdentity;
}

export class Server implements ServerControl, ServerActions {
  #status: ServerControl['status'] = 'starting';
  #startedAt = Date.now();
  #config!: Config;
  #logs!: LogService;
  #storage!: Storage;
  #catalog!: ModuleCatalog;
  #modules!: ModuleManager;
  #container!: AwilixContainer;
  /** Kept across restarts, with the ports the system chose for `port: 0`. */
  readonly #listeners = new ListenerSet(() => ({ config: this.#config, http: this.#http, kinds: this.#listenerKinds, c2s: this.#c2sEnvironment, logger: this.#logger }));
  #control?: ControlServer;
  #c2sEnvironment!: C2SEnvironment;
  #websocket?: WebSocketEndpoint;
  #purgeTimer?: NodeJS.Timeout;
  // Recreated on every boot, so a restart starts from a clean slate (no hook or handler left behind).
  #hooks = new HookBus();
  #registry = new CommandRegistry();
  #http = new HttpHandlerRegistry();
  #scopes = new ScopeRegistry();
  #listenerKinds = new ListenerKinds();
  #services!: KernelServices;
  /** Kept across restarts: a restart must not lift login bans. */
  #logins?: LoginThrottle;
  #lifecycle: Promise<void> = Promise.resolve();
  /** Boots of this process so far (a restart boots again). */
  #boots = 0;
  #administration!: ModuleAdministration;
  /** The other workers, when this process is one of several (recreated on every boot, like the services). */
  #link?: WorkerLink;

  private constructor(private readonly options: ServerOptions) {}

  /** Reads and validates a configuration file as a start would (the primary of several workers reads `workers`). */
  static readConfig(file: string): Promise<Config> {
    return loadConfigFile(file, configContext());
  }

  /** Starts a server; rejects (with everything it opened closed again) when anything fails. */
  static async start(options: ServerOptions): Promise<Server> {
    shareServerPackages();
    const server = new Server(options);
    await server.#boot();
    return server;
  }

  get status(): ServerControl['status'] {
    return this.#status;
  }

  get mode(): ServerControl['mode'] {
    return this.options.maintenance ? 'maintenance' : 'normal';
  }

  get startedAt(): number {
    return this.#startedAt;
  }

  get version(): string {
    return KERNEL_VERSION;
  }

  get worker(): { readonly index: number; readonly count: number } {
    return this.options.worker ?? { index: 1, count: 1 };
  }

  get config(): Config {
    return this.#config;
  }

  get logger(): Logger {
    return this.#logs.logger;
  }

  get #logger(): Logger {
    return this.#logs?.logger;
  }

  get services(): KernelServices {
    return this.#services;
  }

  /** The bound port of each listener, in configuration order. */
  ports(): number[] {
    return this.#listeners.ports();
  }

  /** The port of the first listener of a kind (tests and tools). */
  portOf(module: ListenerConfig['module']): number | undefined {
    return this.#listeners.portOf(module);
  }

  stop(): void {
    // Under workers the primary stops them all, this one included.
    if (this.#link) return this.#link.exitServer(0);
    void this.shutdown().then(() => this.options.onExit?.(0));
  }

  /**
   * Reads and validates the configuration file as a restart would, changing nothing: a restart with a file
   * that cannot start the server would leave no server at all. Throws the ConfigError.
   */
  async checkConfigFile(): Promise<void> {
    await loadConfigFile(this.options.configFile, configContext());
  }

  restart(): void {
    this.#link?.everyWorker({ op: 'restart' });
    this.#restartHere();
  }

  #restartHere(): void {
    this.#serialize(async () => {
      this.#logger.notice('restarting');
      await this.#teardown();
      await this.#boot();
    }).catch((err: unknown) => {
      this.#logger.fatal({ err }, 'restart failed: %s', (err as Error).message);
      this.options.onExit?.(1);
    });
  }

  halt(): void {
    if (this.#link) return this.#link.exitServer(1);
    this.#logger.fatal('halt requested: stopping at once with status 1');
    this.#logger.flush?.();
    (this.options.onExit ?? ((status: number) => process.exit(status)))(1);
  }

  /** Graceful stop; safe to call more than once. The log is flushed and closed last. */
  shutdown(): Promise<void> {
    return this.#serialize(async () => {
      await this.#teardown();
      await this.#logs?.close();
    });
  }

  async reloadConfig(): Promise<void> {
    await this.#serialize(() => this.#reload());
    this.#link?.everyWorker({ op: 'reload' });
  }

  /** What another worker applied, applied here (ServerActions). */
  async applyAction(action: ServerAction): Promise<void> {
    switch (action.op) {
      case 'reload':
        return this.#serialize(() => this.#reload());
      case 'apply-modules':
        return this.#serialize(() => this.#applyModules({ ...(action.restart ? { restart: action.restart } : {}), here: true }));
      case 'loglevel':
        return this.#logs.setLevel(action.level);
      case 'reopen-log':
        return this.#logs.reopen();
      case 'restart':
        return this.#restartHere();
      case 'data-replaced':
        await dropStaleState(this.#services, action.why);
        return;
    }
  }

  /** The primary stops the workers (ServerActions). */
  stopWorker(): void {
    void this.shutdown().then(() => this.options.onExit?.(0));
  }

  /** Lifecycle operations and module changes run one at a time. */
  #serialize<T>(op: () => Promise<T>): Promise<T> {
    const next = this.#lifecycle.then(op, op);
    this.#lifecycle = next.then(
      () => {},
      () => {},
    );
    return next;
  }

  /** What installs, upgrades and restarts of modules need of the server: its queue, and applying modules. */
  readonly #runtime: ModuleRuntime = {
    serialized: (change) => this.#serialize(change),
    applyModules: (options) => this.#applyModules(options),
  };

  /**
   * Validates the running configuration's text again (installed plugins may have changed) and brings the
   * modules to it. The storage-bound options keep their running values, as on reload.
   */
  async #applyModules(options: { restart?: readonly string[]; here?: boolean } = {}): Promise<void> {
    const previous = this.#config;
    const next = await parseConfig(previous.text, previous.file, configContext());
    this.#config = { ...next, dataDir: previous.dataDir, sql: previous.sql, default_db: previous.default_db, auth_method: previous.auth_method };
    try {
      await this.#modules.apply(desiredModules(this.#config), options);
    } catch (err) {
      this.#config = previous;
      throw err;
    }
    if (!options.here) this.#link?.everyWorker({ op: 'apply-modules', ...(options.restart ? { restart: options.restart } : {}) });
  }


  async #boot(): Promise<void> {
    this.#status = 'starting';
    this.#startedAt = Date.now();
    const config = await loadConfigFile(this.options.configFile, configContext());
    this.#config = config;
    // Before the log opens its file there: a directory the log writer made would have the default mode, and
    // the data directory holds the database (password keys) and the control socket.
    await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
    // Under workers the primary rotates the file by size (one process renames it) and the workers reopen it.
    const logSettings = { level: config.loglevel, rotateCount: config.log_rotate_count, rotateSize: this.options.worker ? Infinity : config.log_rotate_size };
    if (this.#logs) this.#logs.configure(logSettings);
    else if (this.options.logger) this.#logs = LogService.external(this.options.logger, config.loglevel);
    else {
      this.#logs = new LogService({
        ...logSettings,
        file: config.log_file ? resolve(config.dataDir, config.log_file) : undefined,
        stdout: this.options.stdout ?? false,
        pretty: this.options.pretty ?? false,
        ...(this.options.worker ? { worker: this.options.worker.index } : {}),
      });
    }
    try {
      // A fallback installed by install_fallback replaces the database files before anything opens them: in
      // one process at every boot, under workers only at worker 1's first, before the others are forked.
      const alone = this.options.worker === undefined || (this.options.worker.alone === true && this.#boots === 0);
      this.#boots++;
      await applyInstalledFallback(config, this.#logger, !alone);
      this.#storage = await Storage.open({ sql: config.sql, dataDir: config.dataDir, defaultDb: config.default_db }, this.#logger);
      await this.#storage.migrate('kernel', ACCOUNT_MIGRATIONS, this.#authDb());
      await this.#storage.migrate('kernel', NODE_MIGRATIONS, config.default_db);
      await this.#storage.migrate('service_oauth', OAUTH_MIGRATIONS, config.oauth_db_type ?? config.default_db);
      this.#catalog = new ModuleCatalog(BUILTIN_MODULES_DIR, join(config.dataDir, 'plugins'));
      this.#createServices();
      if (!this.options.maintenance) {
        await this.#services.node.recordStart(config.node_name);
        for (const module of config.impliedModules) {
          this.#logger.info({ module }, 'module %s is enabled because a listener routes requests to it', module);
        }
        if (config.login_failures_per_address !== undefined) {
          this.#logger.warn({ option: 'login_failures_per_address' }, 'login_failures_per_address is deprecated: enable mod_fail2ban and set its c2s_max_auth_failures (and c2s_auth_ban_lifetime); while mod_fail2ban does not run, this option still bans addresses');
        }
        if (PBKDF2_IMPLEMENTATION.problem !== undefined && config.auth_password_format === 'scram') {
          this.#logger.warn({ reason: PBKDF2_IMPLEMENTATION.problem }, "the native PBKDF2 (@service/pbkdf2) is not built: SCRAM keys are derived with node:crypto's, about half as fast");
        }
        if (this.options.worker?.index === 1 && ownSocketProblem !== undefined) {
          // Said once (worker 1), and as a warning only where the addon should have been built.
          const level = process.platform === 'linux' ? 'warn' : 'info';
          this.#logger[level]({ reason: ownSocketProblem }, 'the SO_REUSEPORT addon (@service/reuseport) is not loaded: the primary hands each XMPP connection to a worker, about 0.2 ms of CPU per login');
        }
        await this.#link?.start();
        await this.#modules.apply(desiredModules(config));
        // Under workers, worker 1 serves servicectl: the commands see the whole server from any worker.
        if ((this.options.worker?.index ?? 1) === 1) this.#control = await ControlServer.start(join(config.dataDir, CONTROL_SOCKET), this.#services, this.#logger);
        await this.#listeners.openAll();
        this.#link?.ready();
      }
    } catch (err) {
      await this.#teardown().catch(() => {});
      throw err;
    }
    this.#status = 'started';
    if (this.options.maintenance) return;
    // Expired tokens stop working at once (verify checks the expiry); their rows go now and then (once per
    // node: under workers, worker 1 purges).
    if (this.worker.index === 1) this.#purgeTimer = setInterval(() => {
      this.#services.oauth.tokens.purgeExpired().catch((err: unknown) => this.#logger.warn({ err }, 'purging expired OAuth tokens failed'));
      this.#services.oauth.models.purgeExpired().catch((err: unknown) => this.#logger.warn({ err }, 'purging expired OAuth sessions and codes failed'));
    }, TOKEN_PURGE_INTERVAL_MS);
    this.#purgeTimer?.unref();
    this.#logger.notice(
      { node: config.node_name, hosts: config.hosts, modules: this.#modules.running(), listeners: this.#listeners.describe() },
      'service %s started on %s',
      KERNEL_VERSION,
      config.node_name,
    );
  }

  #oauthDb(): DbKind {
    return this.#config.oauth_db_type ?? this.#config.default_db;
  }

  #authDb(): DbKind {
    return this.#config.auth_method.includes('sql') ? 'sql' : 'mnesia';
  }

  #createServices(): void {
    this.#hooks = new HookBus();
    this.#registry = new CommandRegistry();
    this.#http = new HttpHandlerRegistry();
    this.#scopes = new ScopeRegistry();
    this.#listenerKinds = new ListenerKinds();
    this.#listenerKinds.onRemoved((kind) => this.#listeners.closeKind(kind));
    const caches = new SharedCaches(this.#hooks);
    const accounts = new AccountService(
      () => this.#storage.db(this.#authDb()),
      this.#hooks,
      () => ({
        hosts: this.#config.hosts,
        passwordFormat: this.#config.auth_password_format,
        scramHashes: scramHashesOf(this.#config.auth_scram_hash),
        cache: { enabled: this.#config.auth_use_cache, size: this.#config.auth_cache_size, lifeTimeSeconds: this.#config.auth_cache_life_time },
      }),
      this.#logger,
      caches,
    );
    const bus = new CommandBus(this.#registry, () => this.#config.access, this.#logger, (name) => this.#catalog.commandOwner(name));
    const logins = (this.#logins ??= new LoginThrottle(
      () => ({
        perAccount: this.#config.login_failures_per_account,
        perAddress: this.#config.login_failures_per_address,
        banSeconds: this.#config.login_ban_lifetime,
        exempt: (ip) => this.#config.access.matchRule(this.#config.login_ban_exempt, { ip }) === 'allow',
      }),
      this.#logger,
    ));
    this.#administration = new ModuleAdministration(this.#catalog, this.#runtime, () => this.#config, this.#logger);
    const worker = this.options.worker;
    const processes = new ProcessChannels(worker?.index ?? 1, worker?.count ?? 1);
    const services: KernelServices = {
      config: () => this.#config,
      access: () => this.#config.access,
      logger: this.#logger,
      storage: this.#storage,
      accounts,
      commands: bus,
      hooks: this.#hooks,
      http: this.#http,
      scopes: this.#scopes,
      server: this,
      workers: workersControl(worker, () => this.#link),
      processes,
      nodes: new ServerNodes(() => this.#config.node_name, processes),
      logins,
      httpAuth: new HttpAuthenticator(accounts, logins),
      tokens: { revokeAccount: (account) => this.#services.oauth.tokens.revokeWhere({ account }) },
      listenerKinds: this.#listenerKinds,
      httpServer: singleHandlerServer(this.#logger, () => this.#config.certfiles[0]),
      commandDocs: (options) => this.#commandDocs(options?.runtimeOnly ?? false),
      docs: documentationApi((runtimeOnly) => this.#commandDocs(runtimeOnly)),
      catalog: this.#catalog,
      modules: this.#administration,
      caches,
      portability: new PortabilityRegistry(),
      plugins: new PluginInstaller(this.#catalog, () => pluginSettings(this.#config), this.#runtime, this.#logger),
      node: new NodeIdentity(() => this.#storage.db(this.#config.default_db)),
      xmpp: new XmppService(this.#hooks, accounts, () => this.#config.hosts, this.#logger),
      oauth: createOAuthService(() => this.#config, () => this.#storage.db(this.#oauthDb()), this.#scopes, this.#registry, this.#logger, caches),
    };
    this.#services = services;
    attachOAuth(services, () => this.#config);
    const streams = attachClientStreams(services, () => this.#config);
    this.#c2sEnvironment = streams.environment;
    this.#websocket = streams.websocket;
    this.#container = createContainer({ strict: true });
    this.#container.register(Object.fromEntries(Object.entries(services).map(([k, v]) => [k, asValue(v)])));
    this.#registerKernelCommands();
    this.#modules = new ModuleManager(this.#catalog, services, this.#container, this.#logger);
    this.#administration.attach(this.#modules);
    if (worker) this.#link = new WorkerLink(worker, this.#config.dataDir, services, logins, this, this.#logger);
  }

  #commandDocs(runtimeOnly: boolean): Promise<CommandDoc[]> {
    return commandDocs(this.#registry, this.#catalog, (module) => this.#modules.isRunning(module), runtimeOnly);
  }

  #registerKernelCommands(): void {
    for (const [decl, handler] of kernelCommandHandlers(this.#services, () => this.#logs)) this.#registry.register(decl, handler, 'kernel');
  }

  async #reload(): Promise<void> {
    const next = await loadConfigFile(this.#config.file, configContext());
    const previous = this.#config;
    for (const key of ['data_dir', 'log_file', 'sql_type', 'sql_server', 'sql_port', 'sql_database', 'sql_username', 'sql_password', 'default_db', 'auth_method'] as const) {
      if (!isDeepStrictEqual(previous[key], next[key])) this.#logger.warn({ option: key }, 'option %s changed: it takes effect at the next restart', key);
    }
    // Storage-bound options keep their running values until a restart.
    this.#config = { ...next, dataDir: previous.dataDir, sql: previous.sql, default_db: previous.default_db, auth_method: previous.auth_method };
    this.#logs.configure({ level: next.loglevel, rotateCount: next.log_rotate_count, rotateSize: next.log_rotate_size });
    try {
      await this.#modules.apply(desiredModules(next));
    } catch (err) {
      this.#logger.error({ err }, 'applying the new module configuration failed; restoring the previous one');
      this.#config = previous;
      await this.#modules.apply(desiredModules(previous)).catch((e: unknown) => this.#logger.error({ err: e }, 'restoring the previous modules failed'));
      throw err;
    }
    await this.#listeners.reload();
    await this.#hooks.run('config_reloaded');
    this.#logger.notice({ modules: this.#modules.running() }, 'configuration reloaded from %s', next.file);
  }

  async #teardown(): Promise<void> {
    if (this.#status === 'stopped') return;
    this.#status = 'stopping';
    clearInterval(this.#purgeTimer);
    this.#websocket?.close();
    await this.#control?.close().catch((err: unknown) => this.#logger?.error({ err }, 'closing the control socket failed'));
    this.#control = undefined;
    await this.#listeners.closeAll(this.#logger);
    // After the listeners: the other workers hear of the sessions that ended with them.
    await this.#link?.stop().catch((err: unknown) => this.#logger?.error({ err }, 'leaving the other workers failed'));
    this.#link = undefined;
    await this.#modules?.stopAll();
    this.#registry.unregisterModule('kernel');
    await this.#container?.dispose().catch(() => {});
    await this.#storage?.close();
    this.#status = 'stopped';
    this.#logger?.notice('service stopped');
  }
}
