/**
 * Logging on pino. The configuration speaks the spec's (and ejabberd's) level names; they map onto pino
 * levels, with `notice` added between `warn` and `info`.
 */
import { createRequire } from 'node:module';
import { pino, type Logger as PinoLogger, type DestinationStream, type Level } from 'pino';
import type PinoPretty from 'pino-pretty';

const require = createRequire(import.meta.url);

/**
 * Coloured, aligned lines for a terminal (the foreground on a TTY). pino-pretty is loaded here, on first use: a
 * server that logs JSON (a daemon, a worker) never carries its 10 MB.
 */
export function prettyStream(): DestinationStream {
  const pretty = require('pino-pretty') as typeof PinoPretty;
  return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true, customLevels: 'notice:35' });
}

export type Logger = PinoLogger<'notice'>;

export const LOG_LEVELS = ['none', 'emergency', 'alert', 'critical', 'error', 'warning', 'notice', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const PINO_LEVEL: Record<LogLevel, Level | 'notice' | 'silent'> = {
  none: 'silent',
  emergency: 'fatal',
  alert: 'fatal',
  critical: 'fatal',
  error: 'error',
  warning: 'warn',
  notice: 'notice',
  info: 'info',
  debug: 'debug',
};

/** Argument names whose values never reach a log line. */
export const SECRET_KEYS = ['password', 'newpass', 'token', 'secret', 'passwordhash', 'sql_password', 'authorization'];

export interface LoggerOptions {
  level: LogLevel;
  /** Pretty output (colours, aligned) for a terminal; JSON lines otherwise. */
  pretty?: boolean;
  destination?: DestinationStream;
  /** Fields on every line (under workers: `worker`, the index of the process that logged it). */
  base?: Record<string, unknown>;
}

export function createLogger(options: LoggerOptions): Logger {
  const destination =
    options.destination ??
    (options.pretty ? prettyStream() : pino.destination({ dest: 1, sync: false }));
  return pino(
    {
      level: PINO_LEVEL[options.level],
      customLevels: { notice: 35 },
      // Nothing on every line but what says which process wrote it when several share the file (workers).
      base: options.base,
      // Top-level and `args.` keys only: wildcard paths cost more than the rest of a log line.
      // Command arguments are never logged unmasked (see maskSecrets), this is the safety net.
      redact: { paths: SECRET_KEYS.flatMap((k) => [k, `args.${k}`]), censor: '********' },
    },
    destination,
  ) as Logger;
}

export function setLogLevel(logger: Logger, level: LogLevel): void {
  logger.level = PINO_LEVEL[level];
}

export function pinoLevelOf(level: LogLevel): string {
  return PINO_LEVEL[level];
}
