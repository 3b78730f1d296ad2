/**
 * Command failures. A handler throws a `CommandError` of one kind; each frontend maps the kind to its own
 * form (HTTP status and JSON code, XML-RPC fault code, CLI exit status) from the one table below, so the
 * same failure reads the same everywhere.
 *
 * Plugins need not import this class: any thrown object with a known `kind` string and a `message` is
 * treated the same way (see `asCommandError`).
 */

export type ErrorKind =
  | 'bad_request'
  | 'bad_argument'
  | 'unauthorized'
  | 'forbidden'
  | 'unknown_command'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'too_large'
  | 'rate_limited'
  | 'failed'
  | 'unavailable'
  | 'internal';

export interface ErrorKindInfo {
  /** HTTP status of the JSON API. */
  readonly http: number;
  /** Stable numeric code in the JSON error body and XML-RPC faults. */
  readonly code: number;
  /** What the kind means, for the docs. */
  readonly doc: string;
}

export const ERROR_KINDS: Readonly<Record<ErrorKind, ErrorKindInfo>> = {
  unauthorized: { http: 401, code: 10, doc: 'Bad credentials: wrong password, or an unknown, expired or revoked token.' },
  forbidden: {
    http: 403,
    code: 32,
    doc: 'Authenticated (or anonymous) but not allowed by api_permissions, or not on this frontend; or a login from an address mod_fail2ban banned, refused without checking the credentials until the ban ends (Retry-After says when).',
  },
  bad_request: { http: 400, code: 40, doc: 'The request itself is malformed: invalid JSON, a body that is not an object.' },
  bad_argument: { http: 400, code: 41, doc: 'An argument is missing, unknown, duplicated, of the wrong type or invalid.' },
  unknown_command: { http: 404, code: 44, doc: 'No such command, or its module is not enabled.' },
  not_found: { http: 404, code: 45, doc: 'The command exists but what it acts on does not (an account, a session…).' },
  method_not_allowed: { http: 405, code: 46, doc: 'The HTTP method is not one the endpoint accepts (GET, POST, OPTIONS for /api).' },
  conflict: { http: 409, code: 49, doc: 'The command conflicts with the current state (registering an existing account).' },
  too_large: { http: 413, code: 13, doc: 'The request body exceeds the listener\'s max_body_size.' },
  rate_limited: {
    http: 429,
    code: 29,
    doc: 'Too many failed logins from this address (or to this account from it): refused, without checking the credentials, until the ban ends; Retry-After says when.',
  },
  failed: { http: 422, code: 42, doc: 'The command was valid but could not be carried out (an invalid configuration file on reload).' },
  unavailable: { http: 503, code: 53, doc: 'The server is stopping or a needed service is down.' },
  internal: { http: 500, code: 50, doc: 'An internal fault; it is logged with the request id.' },
};

/**
 * A bad value's message names its argument, as the argument errors of the declarations do (`argument 'x' must
 * be…`): a handler's own wording ("unknown statistic 'foo'") gets `argument 'name': ` in front unless it
 * already starts with the name or quotes it (servicectl's `<name>` included). Applied once, where an error
 * leaves the command bus: a handler may still wrap another's message in its own words first.
 */
export function namingArgument(message: string, argument: string): string {
  if (message.startsWith(`${argument}:`) || message.startsWith(`${argument} `) || message.includes(`'${argument}'`) || message.includes(`<${argument}>`)) return message;
  return `argument '${argument}': ${message}`;
}

export class CommandError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** The argument at fault, when there is one. */
    readonly argument?: string,
    /** Seconds after which trying again may succeed (rate_limited, or forbidden for a banned address; HTTP's Retry-After). */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'CommandError';
  }

  get info(): ErrorKindInfo {
    return ERROR_KINDS[this.kind];
  }
}

export const badArgument = (argument: string, message: string) => new CommandError('bad_argument', message, argument);
export const notFound = (message: string) => new CommandError('not_found', message);
export const conflict = (message: string) => new CommandError('conflict', message);
export const failed = (message: string) => new CommandError('failed', message);

/** Normalizes anything thrown by a handler: a CommandError, a look-alike from a plugin, or an internal fault. */
export function asCommandError(err: unknown): CommandError | undefined {
  if (err instanceof CommandError) return err;
  if (typeof err === 'object' && err !== null) {
    const { kind, message, argument, retryAfter } = err as { kind?: unknown; message?: unknown; argument?: unknown; retryAfter?: unknown };
    if (typeof kind === 'string' && Object.hasOwn(ERROR_KINDS, kind) && typeof message === 'string') {
      return new CommandError(kind as ErrorKind, message, typeof argument === 'string' ? argument : undefined, typeof retryAfter === 'number' ? retryAfter : undefined);
    }
  }
  return undefined;
}
