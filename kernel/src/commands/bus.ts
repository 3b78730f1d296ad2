/**
 * The one path every frontend uses to run a command: resolve the definition for the requested API
 * version, check api_permissions, validate and coerce the arguments from the declaration, run the handler,
 * shape the result, log the call. HTTP, XML-RPC and servicectl differ only in how they read a request and
 * write the answer.
 *
 * Permissions come before arguments: a caller who may not run a command gets the 403 and learns nothing of
 * its arguments (a 400 would describe them).
 */
import { performance } from 'node:perf_hooks';
import type { AccessControl } from '../access/access-control.js';
import type { Logger } from '../log/logger.js';
import { SECRET_KEYS } from '../log/logger.js';
import { closest } from '../config/option-spec.js';
import { coerceArgs, type ArgInput } from './coerce.js';
import { CommandError, asCommandError, namingArgument } from '@service/plugin-api';
import type { CommandRegistry } from './registry.js';
import { formatResult } from './result.js';
import { nameprep, nodeprep } from '@service/plugin-api';
import type { CallContext, Caller, CommandDecl, RegisteredCommand } from '@service/plugin-api';

export interface ExecuteOptions {
  /** API version from a `vN` path segment; the latest definition by default. */
  readonly version?: number;
  readonly progress?: CallContext['progress'];
  readonly output?: CallContext['output'];
}

/** Says which module would provide an unknown command, so the error can tell the operator to enable it. */
export type CommandCatalog = (name: string) => Promise<string | undefined>;

const CLI_FRONTEND = 'service_ctl';
const ignore = (): void => {};

export class CommandBus {
  constructor(
    readonly registry: CommandRegistry,
    private readonly access: () => AccessControl,
    private readonly logger: Logger,
    private readonly catalog: CommandCatalog = async () => undefined,
  ) {}

  /**
   * Runs `name` for `caller`. Resolves to the formatted result; rejects with a `CommandError` whose kind
   * says what went wrong (never with anything else).
   */
  async execute(name: string, input: ArgInput, caller: Caller, options: ExecuteOptions = {}): Promise<unknown> {
    const started = performance.now();
    let command: RegisteredCommand | undefined;
    try {
      command = this.registry.resolve(name, options.version) ?? (await this.unknown(name, options.version));
      this.authorize(command, caller);
      const args = coerceArgs(command.decl, bindAccount(command.decl, input, caller));
      if (this.logger.isLevelEnabled('debug')) this.logger.debug({ command: name, requestId: caller.requestId, args: maskSecrets(args) }, 'command %s arguments', name);
      const call: CallContext = {
        caller,
        command: name,
        version: command.version,
        log: this.logger,
        progress: options.progress ?? ignore,
        output: options.output ?? ignore,
      };
      const value = await command.handler(args as never, call);
      const result = formatResult(name, command.decl.result, value);
      this.#log(caller, name, 'ok', started);
      return result;
    } catch (err) {
      const error = namedArgument(asCommandError(err));
      if (error) {
        this.#log(caller, name, error.kind, started, error.message);
        throw error;
      }
      // A genuine fault: keep the details in the log, give the caller the request id to quote.
      this.logger.error({ err, command: name, frontend: caller.frontend, requestId: caller.requestId }, 'command %s failed with an internal error', name);
      throw new CommandError('internal', `internal error while running ${name}${caller.requestId ? ` (request id ${caller.requestId})` : ''}`);
    }
  }

  /** The definition a call of `name` at `version` would run, or undefined. */
  resolve(name: string, version?: number): RegisteredCommand | undefined {
    return this.registry.resolve(name, version);
  }

  /** The `unknown_command` error for a name with no definition, saying why there is none. */
  async unknown(name: string, version?: number): Promise<never> {
    if (this.registry.has(name) && version !== undefined) {
      const first = this.registry.versions(name)[0]!.version;
      throw new CommandError('unknown_command', `command ${name} is not available in API version ${version}: it starts at version ${first}`);
    }
    const module = await this.catalog(name).catch(() => undefined);
    if (module) throw new CommandError('unknown_command', `unknown command ${name}: it is provided by module ${module}, which is not enabled`);
    const names = this.registry.names();
    const near = closest(name, names, 3);
    const containing = names.filter((n) => n.includes(name) && !near.includes(n));
    const similar = [...near, ...(containing.length <= 3 ? containing : [])].slice(0, 3);
    const hint = similar.length ? ` (did you mean ${similar.join(', ')}?)` : '';
    throw new CommandError('unknown_command', `unknown command ${name}${hint}`);
  }

  /** api_permissions, plus the rule that command-line-only commands run only from servicectl. */
  authorize(command: RegisteredCommand, caller: Caller): void {
    const { decl } = command;
    if (decl.cliOnly && caller.frontend !== CLI_FRONTEND) {
      throw new CommandError('forbidden', `${decl.name} can only be run from the command line (servicectl ${decl.name})`);
    }
    const scopes = caller.oauth?.scopes;
    if (scopes && !scopes.includes('service:admin') && !scopes.includes('service:user') && !scopes.includes(decl.name)) {
      // A token of per-command scopes runs those commands and no other.
      throw new CommandError('forbidden', `not allowed: the token's scopes (${scopes.join(' ') || 'none'}) do not include ${decl.name}`);
    }
    const access = this.access();
    if (access.check(decl, caller).allowed) return;
    const who = caller.account ? `${caller.account.user}@${caller.account.host}` : 'an anonymous caller';
    this.logger.warn(
      { command: decl.name, frontend: caller.frontend, caller: who, ip: caller.ip, requestId: caller.requestId, groups: access.explain(decl, caller) },
      'denied %s to %s: no api_permissions group matched',
      decl.name,
      who,
    );
    throw new CommandError('forbidden', `not allowed: no api_permissions group lets ${who}${caller.ip ? ` from ${caller.ip}` : ''} run ${decl.name} through ${caller.frontend}`);
  }

  #log(caller: Caller, command: string, outcome: string, started: number, message?: string): void {
    if (!this.logger.isLevelEnabled('info')) return;
    this.logger.info(
      {
        frontend: caller.frontend,
        caller: caller.account ? `${caller.account.user}@${caller.account.host}` : undefined,
        ip: caller.ip,
        command,
        outcome,
        ms: Math.round((performance.now() - started) * 100) / 100,
        requestId: caller.requestId,
        ...(message ? { error: message } : {}),
      },
      'command %s: %s',
      command,
      outcome,
    );
  }
}

/**
 * Whether the caller may act only on its own account: its frontend says so (XML-RPC's own-data call form),
 * or a token without service:admin (service:user, or per-command scopes). Everything else is decided by
 * api_permissions alone.
 */
export function ownAccountOnly(caller: Caller): boolean {
  if (caller.ownAccountOnly && caller.account !== undefined) return true;
  if (caller.oauth) return !caller.oauth.scopes.includes('service:admin');
  return false;
}

function accountArgs(decl: CommandDecl): readonly [string, string] | undefined {
  if (decl.account) return decl.account;
  const names = decl.args.map((a) => a.name);
  return names.includes('user') && names.includes('host') ? ['user', 'host'] : undefined;
}

function sameName(given: unknown, own: string, prep: (s: string) => string): boolean {
  if (typeof given !== 'string') return false;
  try {
    return prep(given) === own;
  } catch {
    return false;
  }
}

/**
 * For a caller bound to its own account: missing account arguments default to it, and any other value is
 * refused (403) — a user's token cannot read or change another account.
 */
export function bindAccount(decl: CommandDecl, input: ArgInput, caller: Caller): ArgInput {
  if (!ownAccountOnly(caller)) return input;
  const names = accountArgs(decl);
  if (!names) return input;
  if (!caller.account) {
    if (!caller.oauth) return input;
    // A client_credentials token speaks for an application, not for an account: no account is its own.
    throw new CommandError('forbidden', `not allowed: this token belongs to no account, so it cannot run ${decl.name}, which acts on an account`);
  }
  const entries = [...(Symbol.iterator in input ? (input as Iterable<readonly [string, unknown]>) : Object.entries(input))];
  const [userArg, hostArg] = names;
  const own = caller.account;
  for (const [argName, own_, prep] of [
    [userArg, own.user, nodeprep],
    [hostArg, own.host, nameprep],
  ] as const) {
    const given = entries.filter(([k]) => k === argName);
    if (given.length === 0) entries.push([argName, own_]);
    else if (!given.every(([, v]) => sameName(v, own_, prep))) {
      throw new CommandError('forbidden', `not allowed: these credentials act only on their own account (${own.user}@${own.host}); ${argName} must be ${own_} or left out`);
    }
  }
  return entries;
}

/** A bad value's error as the caller gets it: naming its argument (see namingArgument). */
function namedArgument(error: CommandError | undefined): CommandError | undefined {
  if (error?.kind !== 'bad_argument' || !error.argument) return error;
  const message = namingArgument(error.message, error.argument);
  return message === error.message ? error : new CommandError(error.kind, message, error.argument, error.retryAfter);
}

/** Replaces secret argument values, for any log that shows arguments. */
export function maskSecrets(args: Readonly<Record<string, unknown>>): Record<string, unknown> {
  // fromEntries defines each key as its own property: an argument named __proto__ stays one.
  return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, SECRET_KEYS.includes(k) ? '********' : v]));
}
