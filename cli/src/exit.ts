/**
 * servicectl's exit statuses, one per kind of outcome, each with a one-line message on stderr that says
 * what to do. Documented in docs/servicectl.md.
 */
import type { ErrorKind } from '@service/kernel/cli';

export const EXIT = {
  ok: 0,
  /** An ST command answered 1, or the command failed (nothing to act on, a conflict…). */
  failed: 1,
  /** Wrong arguments or options. */
  usage: 2,
  /** No server answers on the control socket (as `ejabberdctl status`). */
  notRunning: 3,
  unknownCommand: 4,
  /** api_permissions refused the call. */
  denied: 5,
  /** A fault inside the server (see its log). */
  internal: 70,
  /** The configuration is invalid, or a module cannot start. */
  config: 78,
} as const;

export function exitStatusOf(kind: ErrorKind | 'usage'): number {
  switch (kind) {
    case 'usage':
    case 'bad_request':
    case 'bad_argument':
      return EXIT.usage;
    case 'unknown_command':
      return EXIT.unknownCommand;
    case 'forbidden':
    case 'unauthorized':
    case 'rate_limited':
      return EXIT.denied;
    case 'internal':
      return EXIT.internal;
    default:
      return EXIT.failed;
  }
}

/** Prints `servicectl: <message>` on stderr and exits. */
export function fail(message: string, status: number): never {
  process.stderr.write(`servicectl: ${message}\n`);
  process.exit(status);
}
