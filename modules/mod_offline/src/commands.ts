/**
 * The purges of offline storage: delete_expired_messages, delete_old_messages (in batches, with progress
 * in servicectl), and the background purge of one host with its status and abort
 * (delete_old_messages_batch, delete_old_messages_status, abort_delete_old_messages) on the plugin API's
 * batch runner, with ejabberd's texts, in the one place jobs run (worker 1 of the cluster's master: a
 * status or an abort asked on any worker or node finds the purge). They live with the store they purge.
 */
import { PurgeJobs, defineCommand, purgeDays, type ChannelRegistration, type HandlersFor, type Logger, type ServerServices } from '@service/plugin-api';
import type { OfflineStore } from './store.js';

const DAY_MS = 86_400_000;
/** Rows per statement of delete_old_messages: short statements, progress between them. */
const SYNC_BATCH = 1000;

const hostArg = { name: 'host', type: 'string', desc: 'A virtual host of this server', example: 'example.org' } as const;
const daysArg = { name: 'days', type: 'integer', desc: 'Messages stored longer ago than this many days go; 0: every message', example: 31 } as const;

export const offlineCommands = [
  defineCommand({
    name: 'delete_expired_messages',
    tags: ['offline', 'purge'],
    desc: 'Delete expired offline messages from database',
    longdesc: 'Offline messages whose XEP-0079 or XEP-0023 expiry has passed, on every virtual host.',
    args: [],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: {}, result: 0 }],
  }),
  defineCommand({
    name: 'delete_old_messages',
    tags: ['offline', 'purge'],
    desc: 'Delete offline messages older than DAYS',
    longdesc: `Every virtual host's offline messages stored more than \`days\` days ago (0: all of them), ${SYNC_BATCH} at a time; servicectl shows the count as it goes.`,
    args: [daysArg],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { days: 31 }, result: 0 }],
  }),
  defineCommand({
    name: 'delete_old_messages_batch',
    tags: ['offline', 'purge'],
    desc: 'Delete offline messages older than DAYS',
    longdesc:
      'Starts deleting the host\'s offline messages stored more than `days` days ago in the background, `batch_size` per statement and `rate` messages per minute at most, and returns at once. ' +
      'delete_old_messages_status tells how far it got; abort_delete_old_messages stops it between two batches. One purge per host runs at a time.',
    note: 'added 22.05',
    args: [
      hostArg,
      daysArg,
      { name: 'batch_size', type: 'integer', desc: 'Messages deleted per statement', example: 1000 },
      { name: 'rate', type: 'integer', desc: 'Messages deleted per minute at most', example: 10000 },
    ],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { host: 'example.org', days: 31, batch_size: 1000, rate: 10000 }, result: 'Removal of offline messages older than 31 days started on example.org' }],
  }),
  defineCommand({
    name: 'delete_old_messages_status',
    tags: ['offline', 'purge'],
    desc: 'Status of delete old offline messages operation',
    note: 'added 22.05',
    args: [hostArg],
    result: { name: 'status', type: 'string' },
    examples: [{ args: { host: 'example.org' }, result: 'Operation in progress, deleted 5000 messages' }],
  }),
  defineCommand({
    name: 'abort_delete_old_messages',
    tags: ['offline', 'purge'],
    desc: 'Abort currently running delete old offline messages operation',
    note: 'added 22.05',
    args: [hostArg],
    result: { name: 'status', type: 'string' },
    examples: [{ args: { host: 'example.org' }, result: 'Operation aborted' }],
  }),
] as const;

export interface OfflinePurges {
  readonly handlers: HandlersFor<typeof offlineCommands>;
  /** Runs what another worker or node hands to this one (the purge jobs' home). */
  readonly channels: ChannelRegistration[];
  /** Stops the running purges (the module stops). */
  stop(): void;
}

export function offlinePurges(store: OfflineStore, services: ServerServices, logger: Logger): OfflinePurges {
  const jobs = new PurgeJobs({
    channel: 'mod_offline.jobs',
    what: 'offline messages',
    services,
    logger,
    step: (request, before, limit) => store.deleteOldestBatch(request.host, before, limit),
  });
  const handlers: HandlersFor<typeof offlineCommands> = {
    delete_expired_messages: async (_args, call) => {
      // In steps, as delete_old_messages: no long statement, and servicectl shows the count as it grows.
      const now = Date.now();
      let deleted = 0;
      for (;;) {
        const count = await store.deleteExpiredBatch(now, SYNC_BATCH);
        deleted += count;
        call.progress(deleted, undefined, 'expired offline messages deleted');
        if (count < SYNC_BATCH) break;
      }
      call.log.info({ deleted }, 'deleted %d expired offline messages', deleted);
    },
    delete_old_messages: async ({ days }, call) => {
      const before = Date.now() - purgeDays(days) * DAY_MS;
      let deleted = 0;
      for (const host of services.config().hosts) {
        for (;;) {
          const count = await store.deleteOldestBatch(host, before, SYNC_BATCH);
          deleted += count;
          call.progress(deleted, undefined, 'offline messages deleted');
          if (count < SYNC_BATCH) break;
        }
      }
      call.log.info({ deleted, days }, 'deleted %d offline messages older than %d days', deleted, days);
    },
    delete_old_messages_batch: (args) => jobs.start(args),
    delete_old_messages_status: ({ host }) => jobs.status(host),
    abort_delete_old_messages: ({ host }) => jobs.abort(host),
  };
  return { handlers, channels: jobs.channels, stop: () => jobs.stop() };
}
