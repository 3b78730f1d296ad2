/**
 * The logger a module gets: leveled, structured (an object of fields first, then a message with printf-style
 * arguments), with child loggers that add fields. The server's logger (pino, with ejabberd's level names) is
 * one; a plugin depends on this shape, not on pino.
 */
export interface LogFn {
  (fields: object, message?: string, ...args: unknown[]): void;
  (message: string, ...args: unknown[]): void;
}

export interface Logger {
  fatal: LogFn;
  error: LogFn;
  warn: LogFn;
  /** Between warn and info, as ejabberd's `notice`. */
  notice: LogFn;
  info: LogFn;
  debug: LogFn;
  trace: LogFn;
  /** A logger whose lines carry these fields too. */
  child(fields: Record<string, unknown>): Logger;
  isLevelEnabled(level: string): boolean;
}
