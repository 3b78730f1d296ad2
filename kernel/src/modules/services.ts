/**
 * The kernel's services: what a module gets (the plugin API's ServerServices, here with the kernel's own
 * classes behind each view) plus what only the kernel's parts use (storage, OAuth, HTTP registries…).
 */
import type { AccessControl } from '../access/access-control.js';
import type { AccountService } from '../accounts/accounts.js';
import type { LoginThrottle } from '../accounts/login-throttle.js';
import type { ListenerKinds } from './listener-kinds.js';
import type { CommandBus } from '../commands/bus.js';
import type { Config } from '../config/load.js';
import type { CommandDoc } from '@service/plugin-api';
import type { HookBus } from '../hooks/hooks.js';
import type { HttpAuthenticator } from '../http/authenticate.js';
import type { HttpHandlerRegistry } from '../http/handlers.js';
import type { Logger } from '../log/logger.js';
import type { Storage } from '../storage/database.js';
import type { NodeIdentity } from '../node/identity.js';
import type { ModuleCatalog } from './catalog.js';
import type { ModuleAdministration } from './administration.js';
import type { SharedCaches } from '../caches/shared-caches.js';
import type { PluginInstaller } from '../plugins/installer.js';
import type { ScopeRegistry } from './scopes.js';
import type { XmppService } from '../xmpp/service.js';
import type { OAuthService } from '../oauth/service.js';
import type { ServerControl, ServerServices } from '@service/plugin-api';
import type { WorkersControl } from '../workers/control.js';
import type { ProcessChannels } from '../workers/channels.js';
import type { ServerNodes } from '../node/nodes.js';
import type { PortabilityRegistry } from './portability-registry.js';

export type { ServerControl } from '@service/plugin-api';

export interface KernelServices extends ServerServices {
  /** The running configuration; it changes on reload_config, so read it when needed. */
  config(): Config;
  /** Compiled acl, access_rules and api_permissions of the running configuration. */
  access(): AccessControl;
  readonly logger: Logger;
  readonly storage: Storage;
  readonly accounts: AccountService;
  /** Listener kinds running modules serve. */
  readonly listenerKinds: ListenerKinds;
  /** The failed-login limit every way in shares (bans by address, and by account at an address). */
  readonly logins: LoginThrottle;
  readonly commands: CommandBus;
  readonly hooks: HookBus;
  readonly http: HttpHandlerRegistry;
  /** Turns an Authorization header into a caller's account (and OAuth scopes). */
  readonly httpAuth: HttpAuthenticator;
  readonly scopes: ScopeRegistry;
  readonly server: ServerControl;
  /** Which worker this process is, and how a change of its state reaches the other workers. */
  readonly workers: WorkersControl;
  /** Modules' channels between the workers. */
  readonly processes: ProcessChannels;
  /** This node, or the cluster a cluster module's transport spans. */
  readonly nodes: ServerNodes;
  /** Where modules come from (built-in and installed plugins) and their declarations. */
  readonly catalog: ModuleCatalog;
  /** Restarts and code reloads of running modules (update, update_list, restart_module). */
  readonly modules: ModuleAdministration;
  /** Caches invalidated on every node of a cluster. */
  readonly caches: SharedCaches;
  /** What running modules export and import of an account or a host (XEP-0227). */
  readonly portability: PortabilityRegistry;
  /** Installs, upgrades and removes plugins from the registries (module_install…). */
  readonly plugins: PluginInstaller;
  /** This node's identity in stored data. */
  readonly node: NodeIdentity;
  /** Sessions, routing, IQ handlers, SASL, features, disco. */
  readonly xmpp: XmppService;
  /** OAuth tokens and clients (`service_oauth`). */
  readonly oauth: OAuthService;
  /**
   * Every known command, sorted by name: the loaded ones (`runtime`), then, unless `runtimeOnly`, those of
   * available modules that are not enabled.
   */
  commandDocs(options?: { runtimeOnly?: boolean }): Promise<CommandDoc[]>;
}
