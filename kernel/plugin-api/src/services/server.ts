/**
 * What modules may know and ask of the server itself: its configuration (a read-only view, current after a
 * reload), access rules, the command bus, and its life cycle.
 */
import type { ArgInput, CallContext, Caller, CommandDecl, RegisteredCommand } from '../commands/types.js';
import type { DbKind } from '../storage/sql.js';

/** The running configuration's options that modules read. */
export interface ServerConfigView {
  /** The served virtual hosts. */
  readonly hosts: readonly string[];
  /** The data directory (absolute): relative paths in commands are relative to it. */
  readonly dataDir: string;
  readonly node_name: string;
  readonly default_db: DbKind;
}

export type AccessAction = 'allow' | 'deny';

/** Who an ACL or access rule is asked about. */
export interface AclSubject {
  readonly user?: string;
  readonly server?: string;
  readonly resource?: string;
  readonly ip?: string;
}

/** acl and access_rules of the running configuration. */
export interface AccessApi {
  hasRule(name: string): boolean;
  /** The named rule's answer; an undefined rule denies, as in ejabberd. */
  matchRule(rule: string, subject: AclSubject): AccessAction;
  matchAcl(name: string, subject: AclSubject): boolean;
  /**
   * The value a shaper_rules entry gives the subject (ejabberd's limits by account, such as
   * max_user_offline_messages): a number (Infinity for `infinity`), a name (`none` or a shaper's), or
   * undefined when there is no rule by that name or none of its entries matches.
   */
  shaperRuleValue(rule: string, subject: AclSubject): number | string | undefined;
}

export interface ExecuteOptions {
  /** API version from a `vN` path segment; the latest definition by default. */
  readonly version?: number;
  readonly progress?: CallContext['progress'];
  readonly output?: CallContext['output'];
}

/** The one path every frontend runs commands through: permissions, arguments, the handler, the result. */
export interface CommandsApi {
  /** Runs a command for a caller; rejects with a CommandError whose kind says what went wrong. */
  execute(name: string, input: ArgInput, caller: Caller, options?: ExecuteOptions): Promise<unknown>;
  /** The definition a call of `name` at `version` would run, or undefined. */
  resolve(name: string, version?: number): RegisteredCommand | undefined;
  /** Throws the forbidden CommandError api_permissions gives this caller for this command, if any. */
  authorize(command: RegisteredCommand, caller: Caller): void;
  /** Rejects with the unknown_command error for a name without a definition, saying why. */
  unknown(name: string, version?: number): Promise<never>;
}

export interface CommandDoc {
  readonly decl: CommandDecl;
  /** Earlier versions of the command, oldest first. */
  readonly older: readonly CommandDecl[];
  /** The module that declares it ('kernel' for the server's own). */
  readonly module: string;
  /** Whether it can run now (its module is enabled). */
  readonly loaded: boolean;
}

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
  /** The server's release (what XEP-0092 and `status` report). */
  readonly version: string;
  /**
   * Which of the processes that serve this node this one is (the `workers` option): index 1…count. A job that
   * must run once per node (a purge, a timer) runs on worker 1. One process: { index: 1, count: 1 }.
   */
  readonly worker: { readonly index: number; readonly count: number };
}
