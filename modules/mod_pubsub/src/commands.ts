/**
 * The purges of stored items, with ejabberd's names, arguments and results: delete_expired_pubsub_items
 * (items older than their node's pubsub#item_expire) and delete_old_pubsub_items (keep the newest
 * `number` per node). They act on SQL only, so any worker or node may run them.
 */
import { badArgument, defineCommand, type HandlersFor } from '@service/plugin-api';
import type { PubsubStore } from './store.js';

export const pubsubCommands = [
  defineCommand({
    name: 'delete_expired_pubsub_items',
    tags: ['purge'],
    desc: 'Delete expired PubSub items',
    longdesc: 'Deletes, in every pubsub and PEP node whose `pubsub#item_expire` is set, the items published longer ago than that many seconds.',
    note: 'added 21.12',
    args: [],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: {}, result: 0 }],
  }),
  defineCommand({
    name: 'delete_old_pubsub_items',
    tags: ['purge'],
    desc: 'Keep only NUMBER of PubSub items per node',
    longdesc: 'Deletes, in every pubsub and PEP node, all items but the `number` most recently published.',
    note: 'added 21.12',
    args: [{ name: 'number', type: 'integer', desc: 'Number of items to keep per node', example: 1000 }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { number: 1000 }, result: 0 }],
  }),
] as const;

export function pubsubHandlers(store: PubsubStore): HandlersFor<typeof pubsubCommands> {
  return {
    delete_expired_pubsub_items: async (_args, call) => {
      const deleted = await store.deleteExpired(Date.now());
      call.log.info({ deleted }, 'deleted %d expired pubsub items', deleted);
    },
    delete_old_pubsub_items: async ({ number }, call) => {
      if (number < 0) throw badArgument('number', 'the number of items to keep cannot be negative');
      const deleted = await store.keepNewest(number);
      call.log.info({ deleted, kept: number }, 'deleted %d old pubsub items', deleted);
    },
  };
}
