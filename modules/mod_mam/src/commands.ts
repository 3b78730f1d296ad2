/**
 * The archive's administration commands, with ejabberd's names, arguments and texts: get_mam_count,
 * remove_mam_for_user, remove_mam_for_user_with_peer, delete_old_mam_messages, and the background purge of
 * one host with its status and abort (delete_old_mam_messages_batch, delete_old_mam_messages_status,
 * abort_delete_old_mam_messages) on the plugin API's PurgeJobs, in the one place jobs run (worker 1 of
 * the cluster's master, onJobsHome: a status or an abort asked on any worker or node finds the purge).
 * They live with the store they act on.
 * The `type` groupchat selects room archives (muc-archive.ts); a host's purge takes the room archives of
 * its conference services (its subdomains) with its accounts' archives.
 */
import {
  Jid,
  PurgeJobs,
  accountKey,
  badArgument,
  defineCommand,
  purgeDays,
  type ChannelRegistration,
  type HandlersFor,
  type Logger,
  type ServerServices,
} from '@service/plugin-api';
import type { RoomArchiveStore } from './muc-store.js';
import type { ArchiveKind, ArchiveStore } from './store.js';

const DAY_MS = 86_400_000;
/** Rows per statement of delete_old_mam_messages: short statements, progress between them. */
const SYNC_BATCH = 1000;

const userArg = { name: 'user', type: 'string', desc: 'Username', example: 'bob' } as const;
const hostArg = { name: 'host', type: 'string', desc: 'A virtual host of this server', example: 'example.org' } as const;
const typeArg = { name: 'type', type: 'string', desc: 'Type of messages to delete: chat, groupchat or all', example: 'all' } as const;
const daysArg = { name: 'days', type: 'integer', desc: 'Messages archived longer ago than this many days go; 0: every message', example: 31 } as const;

export const mamCommands = [
  defineCommand({
    name: 'get_mam_count',
    tags: ['mam'],
    desc: 'Get number of MAM messages in a local user archive',
    note: 'added 24.10',
    args: [userArg, hostArg],
    result: { name: 'value', type: 'integer' },
    examples: [{ args: { user: 'bob', host: 'example.org' }, result: 5 }],
  }),
  defineCommand({
    name: 'remove_mam_for_user',
    tags: ['mam'],
    desc: 'Remove mam archive for user',
    args: [userArg, hostArg],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { user: 'bob', host: 'example.org' }, result: 'MAM archive removed' }],
  }),
  defineCommand({
    name: 'remove_mam_for_user_with_peer',
    tags: ['mam'],
    desc: 'Remove mam archive for user with peer',
    args: [userArg, hostArg, { name: 'with', type: 'string', desc: 'Peer JID (its bare JID is used)', example: 'anne@example.com' }],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { user: 'bob', host: 'example.org', with: 'anne@example.com' }, result: 'MAM archive removed' }],
  }),
  defineCommand({
    name: 'delete_old_mam_messages',
    tags: ['mam', 'purge'],
    desc: 'Delete MAM messages older than DAYS',
    longdesc: `Every virtual host's archived messages of \`type\` (chat: accounts' archives, groupchat: room archives, or all) archived more than \`days\` days ago (0: all of them), ${SYNC_BATCH} at a time.`,
    args: [typeArg, daysArg],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { type: 'all', days: 31 }, result: 0 }],
  }),
  defineCommand({
    name: 'delete_old_mam_messages_batch',
    tags: ['mam', 'purge'],
    desc: 'Delete MAM messages older than DAYS',
    longdesc:
      "Starts deleting the host's archived messages of `type` archived more than `days` days ago in the background, `batch_size` per statement and `rate` messages per minute at most, and returns at once. " +
      "groupchat (and all) takes the room archives of the host's conference services, which are its subdomains (conference.@HOST@). " +
      'delete_old_mam_messages_status tells how far it got; abort_delete_old_mam_messages stops it between two batches. One purge per host runs at a time.',
    note: 'added 22.05',
    args: [
      hostArg,
      typeArg,
      daysArg,
      { name: 'batch_size', type: 'integer', desc: 'Number of messages to delete per batch', example: 1000 },
      { name: 'rate', type: 'integer', desc: 'Desired rate of messages to delete per minute', example: 10000 },
    ],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { host: 'example.org', type: 'all', days: 31, batch_size: 1000, rate: 10000 }, result: 'Removal of MAM messages older than 31 days started on example.org' }],
  }),
  defineCommand({
    name: 'delete_old_mam_messages_status',
    tags: ['mam', 'purge'],
    desc: 'Status of delete old MAM messages operation',
    note: 'added 22.05',
    args: [hostArg],
    result: { name: 'status', type: 'string' },
    examples: [{ args: { host: 'example.org' }, result: 'Operation in progress, deleted 5000 messages' }],
  }),
  defineCommand({
    name: 'abort_delete_old_mam_messages',
    tags: ['mam', 'purge'],
    desc: 'Abort currently running delete old MAM messages operation',
    note: 'added 22.05',
    args: [hostArg],
    result: { name: 'status', type: 'string' },
    examples: [{ args: { host: 'example.org' }, result: 'Operation aborted' }],
  }),
] as const;

export interface MamCommands {
  readonly handlers: HandlersFor<typeof mamCommands>;
  /** Runs what another worker or node hands to this one (the purge jobs' home). */
  readonly channels: ChannelRegistration[];
  /** Stops the running purges (the module stops). */
  stop(): void;
}

export function mamHandlers(store: ArchiveStore, rooms: RoomArchiveStore, services: ServerServices, logger: Logger): MamCommands {
  const kinds = (type: string): ArchiveKind[] => {
    switch (type) {
      case 'chat':
        return ['chat'];
      case 'groupchat':
        return ['groupchat'];
      case 'all':
        return ['chat', 'groupchat'];
      default:
        throw badArgument('type', `type must be chat, groupchat or all, got '${type}'`);
    }
  };
  const jobs = new PurgeJobs({
    channel: 'mod_mam.jobs',
    what: 'MAM messages',
    services,
    logger,
    // The scope is the `type` argument, checked where the command was called. Room archives are stored
    // under their conference service's name, not the host's: its accounts' rows first, then its rooms'.
    step: async (request, before, limit) => {
      const selected = kinds(request.scope);
      const accounts = selected.includes('chat') ? await store.deleteOldestBatch(before, ['chat'], limit, request.host) : 0;
      return accounts + (selected.includes('groupchat') ? await rooms.deleteOldestOfHost(before, limit - accounts, request.host) : 0);
    },
  });
  const account = (user: string, h: string) => {
    const key = jobs.host(h);
    try {
      return accountKey(user, key);
    } catch (err) {
      throw badArgument('user', `'${user}' is not a valid username: ${(err as Error).message}`);
    }
  };
  const handlers: HandlersFor<typeof mamCommands> = {
    get_mam_count: ({ user, host: h }) => store.count(account(user, h)),
    remove_mam_for_user: async ({ user, host: h }) => {
      const key = account(user, h);
      await store.deleteAccount(key);
      // As ejabberd: the messages go; the preferences are the account's and go with it (remove_user).
      return 'MAM archive removed';
    },
    remove_mam_for_user_with_peer: async ({ user, host: h, with: peer }) => {
      const key = account(user, h);
      const jid = Jid.tryParse(peer);
      if (!jid) throw badArgument('with', `'${peer}' is not a valid JID`);
      await store.deleteWithPeer(key, jid.bare);
      return 'MAM archive removed';
    },
    delete_old_mam_messages: async ({ type, days }, call) => {
      const selected = kinds(type);
      const before = Date.now() - purgeDays(days) * DAY_MS;
      let deleted = 0;
      for (;;) {
        const count = await store.deleteOldestBatch(before, selected, SYNC_BATCH);
        deleted += count;
        call.progress(deleted, undefined, 'archived messages deleted');
        if (count < SYNC_BATCH) break;
      }
      call.log.info({ deleted, days, type }, 'deleted %d archived messages older than %d days', deleted, days);
    },
    delete_old_mam_messages_batch: ({ type, ...args }) => {
      kinds(type);
      return jobs.start({ ...args, scope: type });
    },
    delete_old_mam_messages_status: ({ host }) => jobs.status(host),
    abort_delete_old_mam_messages: ({ host }) => jobs.abort(host),
  };
  return { handlers, channels: jobs.channels, stop: () => jobs.stop() };
}
