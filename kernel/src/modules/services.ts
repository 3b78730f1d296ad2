/**
 * The kernel services a module may use (Backstage-style typed services). They are also registered in the
 * root DI container under the same names, so a module's scope can resolve them.
 */
import type { AccessControl } from '../access/access-control.js';
import type { AccountService } from '../accounts/accounts.js';
import type { LoginThrottle } from '../accounts/login-throttle.js';
import type { CommandBus } from '../commands/bus.js';
import type { Config } from '../config/load.js';
import type { CommandDoc } from '../docs/command-doc.js';
import type { HookBus } from '../hooks/hooks.js';
import type { HttpAuthenticator } from '../http/authenticate.js';
import type { HttpHandlerRegistry } from '../http/handlers.js';
import type { Logger } from '../log/logger.js';
import type { Storage } from '../storage/database.js';
import type { NodeIdentity } from '../node/identity.js';
import type { ModuleCatalog } from './catalog.js';
import type { ScopeRegistry } from './scopes.js';
import type { XmppService } from '../xmpp/service.js';
import type { OAuthService } from '../oauth/service.js';

/** Stop, restart and reload the server from a command. */
export interface ServerControl {
  /** Graceful stop; the process exits 0 when run from servicectl. */
  stop(): void;
  /** Graceful restart: listeners, modules and storage are stopped and started again on a fresh config. */
  restart(): void;
  /** Validates the configuration file as a restart would read it; throws its ConfigError. */
  checkConfigFile(): Promise<void>;
  /** Immediate stop with exit status 1. */
  halt(): void;
  /** Re-reads the configuration file; throws a ConfigError (and changes nothing) when it is invalid. */
  reloadConfig(): Promise<void>;
  readonly status: 'starting' | 'started' | 'stopping' | 'stopped';
  /** `maintenance`: started by servicectl to run an offline command (no modules, listeners or control socket). */
  readonly mode: 'normal' | 'maintenance';
  readonly startedAt: number;
}

export interface KernelServices {
  /** The running configuration; it changes on reload_config, so read it when needed. */
  config(): Config;
  /** Compiled acl, access_rules and api_permissions of the running configuration. */
  access(): AccessControl;
  readonly logger: Logger;
  readonly storage: Storage;
  readonly accounts: AccountService;
  /** The failed-login limit every way in shares (bans by address, and by account at an address). */
  readonly logins: LoginThrottle;
  readonly commands: CommandBus;
  readonly hooks: HookBus;
  readonly http: HttpHandlerRegistry;
  /** Turns an Authorization header into a caller's account (and OAuth scopes). */
  readonly httpAuth: HttpAuthenticator;
  readonly scopes: ScopeRegistry;
  readonly server: ServerControl;
  /** Where modules come from (built-in and installed plugins) and their declarations. */
  readonly catalog: ModuleCatalog;
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
