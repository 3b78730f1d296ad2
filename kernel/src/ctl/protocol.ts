/**
 * The control channel between servicectl and the server: newline-delimited JSON over a unix socket in the
 * data directory (mode 0600, in a 0700 directory: only the server's own user can connect). Each request
 * has an id; a call may be answered by progress and output frames before its one final frame.
 */
import type { ResultType } from '@service/plugin-api';
import type { ErrorKind } from '@service/plugin-api';
import type { CommandDoc } from '@service/plugin-api';

export const CONTROL_SOCKET = 'servicectl.sock';
/** A request line longer than this closes the connection: servicectl never sends one. */
export const MAX_REQUEST_BYTES = 1024 * 1024;

export type ControlRequest =
  | { id: number; op: 'ping' }
  | { id: number; op: 'describe'; runtimeOnly?: boolean }
  | {
      id: number;
      op: 'call';
      command: string;
      /** Positional words, mapped onto the declaration by the server (see ctl/argv.ts)… */
      argv?: string[];
      /** …or named arguments, as a JSON object. */
      args?: Record<string, unknown>;
      version?: number;
    };

export interface PongFrame {
  id: number;
  type: 'pong';
  pid: number;
  node: string;
  version: string;
  status: string;
  /** How many workers serve, of how many: `started` with fewer than all still serves requests. */
  workers: { serving: number; count: number };
  mode: 'normal' | 'maintenance';
  configFile: string;
}

export type ControlFrame =
  | PongFrame
  | { id: number; type: 'docs'; docs: CommandDoc[] }
  | { id: number; type: 'progress'; done: number; total?: number; label?: string }
  | { id: number; type: 'output'; text: string }
  | { id: number; type: 'result'; command: string; result: unknown; resultType: ResultType }
  | { id: number; type: 'error'; kind: ErrorKind | 'usage'; message: string };
