/**
 * delete_old_push_sessions, with ejabberd's name, argument and text: removes the push sessions, of every
 * account, that no client enabled again for `days` days (each <enable/> renews its push session; 0: all
 * of them). A device still in use enables push at each login, so what is left that long is a device that
 * is gone. It lives with the store it purges; the shared cache of every worker and node is dropped.
 */
import { defineCommand, purgeDays, type HandlersFor } from '@service/plugin-api';
import type { PushStore } from './store.js';

const DAY_MS = 86_400_000;

export const pushCommands = [
  defineCommand({
    name: 'delete_old_push_sessions',
    tags: ['purge'],
    desc: 'Remove push sessions older than DAYS',
    longdesc:
      'Push sessions (XEP-0357 app server nodes enabled by clients) of every virtual host that no client enabled again for more than `days` days (0: every push session). ' +
      'Clients enable push again at each login, so these are devices no longer in use.',
    args: [{ name: 'days', type: 'integer', desc: 'Push sessions not enabled again for more than this many days go; 0: every push session', example: 90 }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { days: 90 }, result: 0 }],
  }),
] as const;

export function pushHandlers(store: PushStore): HandlersFor<typeof pushCommands> {
  return {
    delete_old_push_sessions: async ({ days }, call) => {
      const deleted = await store.deleteEnabledBefore(Date.now() - purgeDays(days) * DAY_MS);
      call.log.info({ deleted, days }, 'deleted %d push sessions older than %d days', deleted, days);
    },
  };
}
