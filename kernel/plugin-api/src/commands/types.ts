/**
 * A command is declared once, as data: name, typed arguments with descriptions, result, tags, docs and
 * examples. Validation, every frontend (HTTP, XML-RPC, CLI), help, documentation and OpenAPI are derived
 * from the declaration. The implementation (the handler) is bound when the owning module starts.
 */
import type { Logger } from '../log/logger.js';

/** Argument and result value types, after ejabberd's command types. */
export type ValueType = 'string' | 'integer' | 'boolean' | ListType | ObjectType;

export interface ListType {
  readonly list: ValueType;
  /** The name of one element (used by XML-RPC and the docs), e.g. `user` for a list of users. */
  readonly item?: string;
  /**
   * A list of two-field objects that the HTTP JSON API returns as one object mapping each item's first
   * field to its second (ejabberd's list of pairs, e.g. modules_available: name → summary). XML-RPC and
   * the CLI keep the list.
   */
  readonly keyed?: true;
}

/** A keyed list's JSON form: `{ first: second, … }`; any other value as it is. */
export function jsonForm(type: ResultType, value: unknown): unknown {
  if (typeof type !== 'object' || !('list' in type) || !type.keyed || !Array.isArray(value)) return value;
  const fields = typeof type.list === 'object' && 'object' in type.list ? type.list.object : [];
  if (fields.length !== 2) return value;
  return Object.fromEntries(value.map((item) => [(item as Record<string, unknown>)[fields[0]!.name], (item as Record<string, unknown>)[fields[1]!.name]]));
}

export interface ObjectType {
  readonly object: readonly FieldDecl[];
}

export interface FieldDecl {
  readonly name: string;
  readonly type: ValueType;
  readonly desc?: string;
}

export interface ArgDecl extends FieldDecl {
  readonly desc: string;
  /** An example value, shown in help and used in generated examples. */
  readonly example?: unknown;
}

/**
 * `rescode` is the spec's ST: the handler reports success as `true`/`undefined` and a boolean "no" as
 * `false`; it is returned as the integer 0 or 1. `restuple` is the spec's RS: a text returned as a string.
 * Failures are thrown as `CommandError`, never encoded as 1.
 */
export type ResultType = ValueType | 'rescode' | 'restuple';

export interface ResultDecl {
  readonly name: string;
  readonly type: ResultType;
  readonly desc?: string;
}

export type CommandPolicy = 'admin' | 'user' | 'open';

export interface CommandExample {
  readonly title?: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly result: unknown;
}

export interface CommandDecl {
  readonly name: string;
  readonly tags: readonly string[];
  /** One line. */
  readonly desc: string;
  /** Markdown: behaviour, failure cases, notes for operators. */
  readonly longdesc?: string;
  /**
   * The API version this definition starts at (default 0). A command may have several definitions; a
   * call for version N uses the newest definition whose version is at or below N.
   */
  readonly version?: number;
  /** Release notes, e.g. "added in 24.06". */
  readonly note?: string;
  /**
   * `admin`: needs rights granted by api_permissions (the default).
   * `user`: acts on the caller's own account; `user`/`host` arguments are bound to the caller.
   * `open`: no account needed, still subject to api_permissions.
   */
  readonly policy?: CommandPolicy;
  readonly args: readonly ArgDecl[];
  readonly result: ResultDecl;
  readonly examples?: readonly CommandExample[];
  /** Refused on every frontend but servicectl. */
  readonly cliOnly?: boolean;
  /**
   * `allowed`: with the server stopped, servicectl runs it in a maintenance kernel (configuration, storage,
   * kernel commands). `required`: it may only run that way. Only kernel commands can be offline.
   */
  readonly offline?: 'allowed' | 'required';
  /** Old argument names still accepted: old name → current name. */
  readonly argsRename?: Readonly<Record<string, string>>;
  /**
   * The arguments naming the account the command acts on, for callers bound to their own account (a token
   * without service:admin, XML-RPC's own-data form). Default: `user` and `host` when both are declared.
   */
  readonly account?: readonly [user: string, host: string];
}

// ---------------------------------------------------------------------------------------------
// Inference: the handler's argument and result types follow from the declaration.

export type TypeOf<T> = T extends 'string'
  ? string
  : T extends 'integer'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends { readonly list: infer E }
        ? TypeOf<E>[]
        : T extends { readonly object: infer F extends readonly FieldDecl[] }
          ? { [P in F[number] as P['name']]: TypeOf<P['type']> }
          : never;

export type ArgsOf<D extends CommandDecl> = { [A in D['args'][number] as A['name']]: TypeOf<A['type']> };

export type ResultOf<D extends CommandDecl> = D['result']['type'] extends 'rescode'
  ? boolean | void
  : D['result']['type'] extends 'restuple'
    ? string
    : TypeOf<D['result']['type']>;

/** Who is calling, established by the frontend before the bus sees the call. */
export interface Caller {
  /** mod_http_api, service_ctl, service_xmlrpc, service_web_admin… (api_permissions `from`). */
  readonly frontend: string;
  /** The listener's `tag` option, matched by api_permissions `from: [{tag: …}]`. */
  readonly tag?: string;
  /** Remote address, IPv4-mapped IPv6 addresses already unwrapped. */
  readonly ip?: string;
  /** The authenticated account, if any. */
  readonly account?: { readonly user: string; readonly host: string };
  /** Set when the caller authenticated with an OAuth token. */
  readonly oauth?: { readonly scopes: readonly string[]; readonly tokenId: string };
  /** XML-RPC's administrator call form (`admin: true` with the credentials). */
  readonly actingAsAdmin?: boolean;
  /**
   * The frontend binds this caller to its own account whatever its rights (XML-RPC's own-data call form):
   * account arguments default to it and other values are refused, as for a token without service:admin.
   */
  readonly ownAccountOnly?: boolean;
  /** Correlates log lines and the response header. */
  readonly requestId?: string;
}

export interface CallContext {
  readonly caller: Caller;
  readonly command: string;
  readonly version: number;
  readonly log: Logger;
  /** Long-running work reports progress; the CLI renders it on a TTY. */
  progress(done: number, total?: number, label?: string): void;
  /**
   * Text for the operator's terminal: servicectl prints it on stdout as it arrives. Only command-line-only
   * commands use it (the other frontends never run them).
   */
  output(text: string): void;
}

export type CommandHandler<D extends CommandDecl = CommandDecl> = (
  args: ArgsOf<D>,
  call: CallContext,
) => ResultOf<D> | Promise<ResultOf<D>>;

/** Declares a command; `const` inference keeps literal names and types for `ArgsOf`. */
export function defineCommand<const D extends CommandDecl>(decl: D): D {
  return decl;
}

/** The handlers a module provides for its declared commands, keyed by command name. */
export type HandlersFor<C extends readonly CommandDecl[]> = {
  [D in C[number] as D['name']]: CommandHandler<D>;
};

/**
 * A command's arguments as a frontend read them: a JSON object, or name/value pairs (a query string, XML-RPC
 * members, servicectl's positional arguments), where a repeated name is an error the bus reports.
 */
export type ArgInput = Readonly<Record<string, unknown>> | Iterable<readonly [string, unknown]>;

/** A declaration as registered: with its owner (module name, or `kernel`). */
export interface RegisteredCommand {
  readonly decl: CommandDecl;
  readonly module: string;
  readonly handler: CommandHandler<CommandDecl>;
  readonly version: number;
}
