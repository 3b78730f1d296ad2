/**
 * The module contract. A module is a package under `modules/<name>/` (or an installed plugin) whose
 * default export is a `ModuleDefinition`: metadata checked before it starts (Fastify-style), typed options
 * with defaults and docs, its tables, its command declarations, the services it provides and consumes, and
 * `start`, which returns what the module registers. Everything registered is removed when the module stops.
 *
 * `defineModule` only helps TypeScript infer the option and handler types; the definition is plain data plus
 * functions.
 */
import type { Knex } from 'knex';
import type { CommandDecl, HandlersFor } from '../commands/types.js';
import type { InferOptions, OptionsSchema } from '../config/options.js';
import type { HttpRequestHandler } from '../http/types.js';
import type { Logger } from '../log/logger.js';
import type { ServerServices } from '../services/index.js';
import type { ChannelRegistration } from '../services/processes.js';
import type { NodeTransport } from '../services/nodes.js';
import type { SessionSource } from '../services/xmpp.js';
import type { DbKind, Migration } from '../storage/sql.js';
import type { Middleware } from '../xmpp/chain.js';
import type { DeliverContext, OfflineContext, ReceiveContext, SendContext, StreamInContext } from '../xmpp/contexts.js';
import type { DiscoRegistration } from '../xmpp/disco.js';
import type { StreamFeatureRegistration } from '../xmpp/features.js';
import type { IqHandlerRegistration } from '../xmpp/iq.js';
import type { SaslMechanism } from '../xmpp/sasl.js';
import type { DomainHandler, RemoteRoute, SessionKeeper } from '../xmpp/routing.js';
import type { SessionMover, SessionStateCarrier } from '../xmpp/moving.js';
import type { HookRegistration } from './hooks.js';
import type { ListenerKindDecl, ListenerStarter } from './listeners.js';
import type { AccountPortability, HostPortability } from './portability.js';
import type { ProvidedService, ServiceDependency, ServiceRef } from './service-ref.js';

type Awaitable<T> = T | Promise<T>;

/** The options type of a schema; an unspecific schema (a plain Record) gives plain records. */
export type OptionsOf<S extends OptionsSchema> = string extends keyof S ? Record<string, unknown> : InferOptions<S>;

/**
 * A module that must start before this one (and restarts it when it restarts or stops), of a version in a
 * range. It orders modules; what one module uses of another goes through service refs (`consumes`).
 */
export interface ModuleDependency {
  readonly module: string;
  /** The versions of it this module works with, as a semver range (any when absent). */
  readonly version?: string;
  /** A soft dependency orders the start but may be absent. */
  readonly optional?: boolean;
}

export interface ScopeDecl {
  /** An OAuth scope this module adds beyond the one-per-command scopes. */
  readonly name: string;
  readonly desc: string;
}

export interface ModuleDefinition<S extends OptionsSchema = OptionsSchema, C extends readonly CommandDecl[] = readonly CommandDecl[]> {
  readonly name: string;
  /** The module's own version (semver). */
  readonly version: string;
  /** The plugin API versions it was built for, as a semver range (e.g. `^0.1.0`); checked before it starts. */
  readonly pluginApi: string;
  /** One line, shown by modules_available. */
  readonly summary: string;
  /** Markdown for the generated docs. */
  readonly doc?: string;
  readonly depends?: readonly (string | ModuleDependency)[];
  /** The services it hands to other modules (its `start` returns their implementations in `services`). */
  readonly provides?: readonly ServiceRef<unknown>[];
  /** The services of other modules it uses (`ctx.use(ref)`); a required one must be running for it to start. */
  readonly consumes?: readonly (ServiceRef<unknown> | ServiceDependency)[];
  readonly options?: S;
  /**
   * Tables the module owns, declared statically so that `print_sql_schema` can show them without
   * starting anything. Applied before `start`, in the store chosen by the module's `db_type` option when it
   * has one, else `default_db`.
   */
  readonly migrations?: readonly Migration[];
  /** Command declarations, static so that docs cover modules that are not enabled. */
  readonly commands?: C;
  /** Listener kinds it adds to `listen:` (the instance opens them: `listeners`). */
  readonly listeners?: Readonly<Record<string, ListenerKindDecl>>;
  /** Frontend names its callers come through, for api_permissions `from:` (mod_http_api, service_xmlrpc…). */
  readonly frontends?: readonly string[];
  /**
   * Runs once per virtual host it is enabled on (ejabberd's per-host modules), each instance with that host's
   * options (`host_config: <host>: modules:`) and `ctx.host`. Its IQ handlers, features, disco entries,
   * middleware and hooks then apply to its host only. A per-host module declares no commands, services,
   * listener kinds or HTTP handlers: those belong to the whole server.
   */
  readonly perHost?: boolean;
  start(ctx: ModuleContext<OptionsOf<S>>): Awaitable<ModuleInstance<C, OptionsOf<S>> | void>;
}

export interface ModuleInstance<C extends readonly CommandDecl[] = readonly CommandDecl[], O = Record<string, unknown>> {
  /**
   * One handler per declared command, no more, no less. A command declared in several versions may have
   * one handler per version, keyed `name@vN`.
   */
  readonly handlers?: HandlersFor<C>;
  readonly hooks?: readonly HookRegistration[];
  /** Request handlers by name, for `request_handlers` in the listener configuration. */
  readonly httpHandlers?: Readonly<Record<string, HttpRequestHandler>>;
  readonly scopes?: readonly ScopeDecl[];
  /** What the module adds to the XMPP side: IQ handlers, middleware, features, disco, SASL, domains. */
  readonly xmpp?: XmppRegistrations;
  /** The implementations of the services listed in `provides`, one each. */
  readonly services?: readonly ProvidedService[];
  /** Its part of XEP-0227 exports and imports: its data of each account as `<user>` child elements. */
  readonly portability?: readonly AccountPortability[];
  /** Its host-level part of XEP-0227 exports and imports (MUC rooms…): child elements of `<host>`. */
  readonly hostPortability?: readonly HostPortability[];
  /** What opens each listener kind the definition declares, one each. */
  readonly listeners?: Readonly<Record<string, ListenerStarter>>;
  /** Endpoints the server's other worker processes call (see ProcessesApi). */
  readonly channels?: readonly ChannelRegistration[];
  /** What spans NodesApi over a cluster (a cluster module's; at most one module gives it). */
  readonly nodeTransport?: NodeTransport;
  stop?(): Awaitable<void>;
  /** Applies new options in place; without it a change of options restarts the module. */
  reload?(newOptions: O, oldOptions: O): Awaitable<void>;
}

/** A layer of one of the router's chains (see xmpp/routing/contexts.ts for what each chain sees). */
export type MiddlewareRegistration =
  | { readonly chain: 'stream_in'; readonly handler: Middleware<StreamInContext>; readonly priority?: number }
  | { readonly chain: 'user_send'; readonly handler: Middleware<SendContext>; readonly priority?: number }
  | { readonly chain: 'deliver'; readonly handler: Middleware<DeliverContext>; readonly priority?: number }
  | { readonly chain: 'offline'; readonly handler: Middleware<OfflineContext>; readonly priority?: number }
  | { readonly chain: 'user_receive'; readonly handler: Middleware<ReceiveContext>; readonly priority?: number };

export interface XmppRegistrations {
  readonly iq?: readonly IqHandlerRegistration[];
  readonly middleware?: readonly MiddlewareRegistration[];
  readonly features?: readonly StreamFeatureRegistration[];
  readonly disco?: readonly DiscoRegistration[];
  /** SASL mechanisms, offered before the kernel's unless `rank` says otherwise (lower first). */
  readonly sasl?: ReadonlyArray<{ readonly mechanism: SaslMechanism; readonly rank?: number }>;
  /** Component domains served by the module (conference.example.org…). */
  readonly domains?: ReadonlyArray<{ readonly domain: string; readonly handler: DomainHandler }>;
  /** Routes to domains the server does not serve (other servers, cluster peers), tried before refusing. */
  readonly remoteRoutes?: readonly RemoteRoute[];
  /** Keeps sessions whose connection was lost (stream management). */
  readonly sessionKeepers?: readonly SessionKeeper[];
  /**
   * Sessions that are not this node's (a cluster peer's), merged into `services.xmpp.sessions` after this
   * node's own while the module runs (see SessionSource).
   */
  readonly sessionSources?: readonly SessionSource[];
  /** How the module's per-session state moves with a session to another node (see xmpp/moving.ts). */
  readonly sessionCarriers?: readonly SessionStateCarrier[];
  /** Fetches sessions from other nodes for a resumption here (a cluster module; see xmpp/moving.ts). */
  readonly sessionMovers?: readonly SessionMover[];
}

export interface ModuleContext<O = Record<string, unknown>> {
  readonly name: string;
  /** Validated, defaults applied. */
  readonly options: O;
  /** The virtual hosts, as currently configured (just `host` for a per-host instance). */
  readonly hosts: readonly string[];
  /** The virtual host of a per-host instance (undefined for a module that runs for the whole server). */
  readonly host?: string;
  readonly logger: Logger;
  /** The module's database (see `migrations`). */
  readonly db: Knex;
  /**
   * Which store `db` is (the module's `db_type`, else `default_db`): behaviour that ejabberd ties to the
   * backend, such as a pattern grammar, follows it.
   */
  readonly dbKind: DbKind;
  readonly services: ServerServices;
  /** A service listed in `consumes`: its implementation, from the module that provides it now. */
  use<T>(ref: ServiceRef<T>): T;
  /** An optional consumed service: undefined while no running module provides it (read it at each use). */
  find<T>(ref: ServiceRef<T>): T | undefined;
}

/** Identity at runtime; lets TypeScript infer option and handler types from the declaration. */
export function defineModule<const S extends OptionsSchema, const C extends readonly CommandDecl[] = readonly []>(
  definition: ModuleDefinition<S, C>,
): ModuleDefinition<S, C> {
  return definition;
}
