/**
 * The three commands of a background purge (start, status, abort: delete_old_messages_batch,
 * delete_old_messages_status, abort_delete_old_messages, and the archive's), once for every module that
 * purges: the arguments checked where the command is called, the job run where the server's jobs run
 * (onJobsHome, through the module's channel), the texts ejabberd's. A module gives what one job deletes
 * per step, and registers `channels` and calls `stop` with its own lifecycle.
 */
import { badArgument, conflict } from '../commands/errors.js';
import { hostKey } from '../accounts/account-key.js';
import type { Logger } from '../log/logger.js';
import type { NodesApi } from '../services/nodes.js';
import type { ChannelRegistration, ChannelValue, ProcessesApi } from '../services/processes.js';
import { BatchJobs, batchStatusText } from './batch-jobs.js';
import { onJobsHome } from './jobs-home.js';

/** What a purge job is asked to delete: its host and age, and the module's own selection (`scope`). */
export interface PurgeRequest {
  readonly host: string;
  readonly days: number;
  /** The module's selection beyond host and age (the archive's message type), as text. */
  readonly scope: string;
}

export interface PurgeJobsSpec {
  /** The module's channel name (`mod_offline.jobs`). */
  readonly channel: string;
  /** What one job deletes, for logs and texts ("offline messages"). */
  readonly what: string;
  readonly services: { readonly processes: ProcessesApi; readonly nodes: NodesApi; config(): { readonly hosts: readonly string[] } };
  readonly logger: Logger;
  /** One step of the job: deletes at most `limit` rows stored before `before` (ms) and says how many went. */
  readonly step: (request: PurgeRequest, before: number, limit: number) => Promise<number>;
}

const DAY_MS = 86_400_000;

type JobCall =
  | { readonly op: 'start'; readonly request: PurgeRequest; readonly batchSize: number; readonly rate: number }
  | { readonly op: 'status'; readonly host: string }
  | { readonly op: 'abort'; readonly host: string };

export class PurgeJobs {
  readonly #jobs: BatchJobs;
  /** The channel onJobsHome calls on the process where jobs run. */
  readonly channels: ChannelRegistration[];

  constructor(private readonly spec: PurgeJobsSpec) {
    this.#jobs = new BatchJobs(spec.logger);
    this.channels = [{ name: spec.channel, handler: (payload) => this.#here(payload as unknown as JobCall) }];
  }

  /** A virtual host of this server, prepared; 400 naming `host` otherwise. */
  host(text: string): string {
    const key = hostKey(text);
    if (!this.spec.services.config().hosts.includes(key)) throw badArgument('host', `'${text}' is not a virtual host of this server`);
    return key;
  }

  /** Starts the purge of `host` (checked here); 409 while one runs there. */
  start(args: { host: string; days: number; batch_size: number; rate: number; scope?: string }): Promise<string> {
    const request: PurgeRequest = { host: this.host(args.host), days: purgeDays(args.days), scope: args.scope ?? '' };
    return this.#atHome({ op: 'start', request, batchSize: positive('batch_size', args.batch_size), rate: positive('rate', args.rate) });
  }

  status(host: string): Promise<string> {
    return this.#atHome({ op: 'status', host: this.host(host) });
  }

  abort(host: string): Promise<string> {
    return this.#atHome({ op: 'abort', host: this.host(host) });
  }

  /** Stops the running purges (the module stops). */
  stop(): void {
    this.#jobs.abortAll();
  }

  #atHome(call: JobCall): Promise<string> {
    return onJobsHome(this.spec.services, this.spec.channel, call as unknown as ChannelValue, () => this.#here(call));
  }

  /** Where the jobs run; the arguments were checked where the command was called. */
  #here(call: JobCall): string {
    const key = (host: string) => `${this.spec.channel}:${host}`;
    switch (call.op) {
      case 'start': {
        const { request } = call;
        const before = Date.now() - request.days * DAY_MS;
        const started = this.#jobs.start(key(request.host), {
          batchSize: call.batchSize,
          rate: call.rate,
          step: (limit) => this.spec.step(request, before, limit),
          what: `${this.spec.what} of ${request.host} older than ${request.days} days`,
        });
        if (!started) throw conflict(`Operation in progress: a purge of ${this.spec.what} runs on ${request.host} (its status command tells how far it got)`);
        return `Removal of ${this.spec.what} older than ${request.days} days started on ${request.host}`;
      }
      case 'status':
        return batchStatusText(this.#jobs.status(key(call.host)));
      case 'abort':
        return this.#jobs.abort(key(call.host)) ? 'Operation aborted' : 'No task running';
    }
  }
}

/** A `days` argument: 0 or more (0: everything); 400 naming `days` otherwise. */
export function purgeDays(value: number): number {
  if (!Number.isInteger(value) || value < 0) throw badArgument('days', `days must be 0 or more, got ${value}`);
  return value;
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw badArgument(name, `${name} must be 1 or more, got ${value}`);
  return value;
}
