/**
 * The services the server gives every module (`ctx.services`): narrow, typed views of its parts. A module
 * needs nothing else of the server; what other modules offer comes through service references (ctx.use).
 */
import type { HttpServerApi } from '../http/server.js';
import type { Logger } from '../log/logger.js';
import type { HooksApi } from '../module/hooks.js';
import type { AccountsApi } from './accounts.js';
import type { HttpAuthApi, TokensApi } from './auth.js';
import type { AccessApi, CommandDoc, CommandsApi, ServerConfigView, ServerControl } from './server.js';
import type { XmppApi } from './xmpp.js';

/** The command documentation the server generates from the declarations. */
export interface DocumentationApi {
  /** Every command loaded now (`runtimeOnly`), or also those of available modules that are not enabled. */
  commands(options?: { runtimeOnly?: boolean }): Promise<CommandDoc[]>;
  /** The OpenAPI 3.1 description of the loaded commands, at an API version (the latest when undefined). */
  openApi(options: { version?: number; serverUrl: string }): Promise<Record<string, unknown>>;
}

import type { CachesApi } from './caches.js';
import type { LoginLimitsApi } from './logins.js';
import type { ModulesApi } from './modules.js';
import type { NodesApi } from './nodes.js';
import type { ProcessesApi } from './processes.js';

export interface ServerServices {
  /** The running configuration; it changes on reload_config, so read it when needed. */
  config(): ServerConfigView;
  /** acl and access_rules of the running configuration. */
  access(): AccessApi;
  readonly logger: Logger;
  readonly accounts: AccountsApi;
  readonly commands: CommandsApi;
  readonly hooks: HooksApi;
  readonly server: ServerControl;
  readonly xmpp: XmppApi;
  readonly docs: DocumentationApi;
  /** The failed-login limit every way in reports to: address bans, unbanning, the bans in force (see LoginLimitsApi). */
  readonly logins: LoginLimitsApi;
  /** HTTP and XML-RPC credentials, through the server's failed-login limit. */
  readonly httpAuth: HttpAuthApi;
  /** OAuth tokens. */
  readonly tokens: TokensApi;
  /** HTTP ports for a module's own listener kinds. */
  readonly httpServer: HttpServerApi;
  /** Restarting modules and reloading their code. */
  readonly modules: ModulesApi;
  /** Caches that must be invalidated on every node (see CachesApi). */
  readonly caches: CachesApi;
  /** The worker processes of this node, and channels between them (see ProcessesApi). */
  readonly processes: ProcessesApi;
  /** The nodes of the cluster (this one alone without a cluster module), ownership of keys, and calls between them (see NodesApi). */
  readonly nodes: NodesApi;
}
