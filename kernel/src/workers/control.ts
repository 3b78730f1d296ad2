/**
 * What the kernel's commands need to know of the workers: which one this process is, and how to make a
 * change of this process's state (the log level, the modules…) every worker's. With one process (the
 * default) it is the process itself and nothing is passed on.
 */
import type { ServerAction } from './messages.js';
import type { WorkerIdentity, WorkerLink } from './worker-link.js';

export interface WorkersControl {
  /** This process's worker; undefined when the server runs as one process. */
  readonly identity?: WorkerIdentity;
  /** The pid servicectl waits for when the server stops: the primary's under workers. */
  readonly pid: number;
  /** Has every other worker apply an action this process applied (nothing with one process). */
  everyWorker(action: ServerAction): void;
  /**
   * How many workers serve, of how many (1 of 1 with one process). The server is `started` as soon as one
   * serves (the primary hands connections only to those listening); `servicectl start` and `started` wait
   * for all of them.
   */
  serving(): { serving: number; count: number };
  /** rotate_log under workers: one process (the primary) renames the file, every worker reopens it. */
  rotateLog(): void;
}

/** The control of this process: `worker` and its link to the others under workers, the process alone otherwise. */
export function workersControl(worker: WorkerIdentity | undefined, link: () => WorkerLink | undefined): WorkersControl {
  return {
    ...(worker ? { identity: worker } : {}),
    pid: worker ? process.ppid : process.pid,
    everyWorker: (action) => link()?.everyWorker(action),
    serving: () => link()?.serving ?? { serving: 1, count: 1 },
    rotateLog: () => link()?.rotateLog(),
  };
}
