/**
 * Where a server's long jobs run (the batch purges and their status): in one place, so that a status or
 * an abort asked anywhere finds the job wherever it was started. That place is worker 1 of the cluster's
 * master node: another worker hands the call to worker 1 (ProcessesApi), another node to the master
 * (NodesApi); alone, the job runs here. The module registers the channel that runs the call there.
 */
import { CommandError, failed, type ErrorKind } from '../commands/errors.js';
import type { NodesApi } from '../services/nodes.js';
import { ChannelError, type ChannelValue, type ProcessesApi } from '../services/processes.js';

/** The worker that runs the jobs of its node. */
export const JOBS_WORKER = 1;

/**
 * Runs `here` when this process is where jobs run, else calls `channel` with `payload` there (its handler
 * runs the same thing there). A CommandError thrown there is thrown here as the same CommandError.
 */
export async function onJobsHome<T extends ChannelValue>(
  services: { readonly processes: ProcessesApi; readonly nodes: NodesApi },
  channel: string,
  payload: ChannelValue,
  here: () => T | Promise<T>,
): Promise<T> {
  const { processes, nodes } = services;
  try {
    if (processes.count > 1 && processes.self !== JOBS_WORKER) return (await processes.call(JOBS_WORKER, channel, payload)) as T;
    if (nodes.clustered()) {
      const master = await nodes.master();
      if (master !== nodes.self) return (await nodes.call(master, channel, payload)) as T;
    }
  } catch (err) {
    if (err instanceof ChannelError && err.errorName === 'CommandError' && err.kind) throw new CommandError(err.kind as ErrorKind, err.message);
    if (err instanceof ChannelError) throw failed(`the jobs run on another process, which cannot be reached: ${err.message}`);
    throw err;
  }
  return here();
}
