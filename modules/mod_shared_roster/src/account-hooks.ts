/**
 * Accounts coming and going: a new account of a vhost with an `@all@` group appears in the rosters of
 * those who see that group; a removed account leaves every group and every roster that showed it.
 */
import type { CachesApi, HookRegistration } from '@service/plugin-api';
import type { Groups } from './groups.js';
import { SHARED_ROSTER_CACHE, type HostAccounts, type OnlineAccounts } from './members.js';
import type { Propagation } from './propagation.js';
import type { SharedRosterStore } from './store.js';

export interface AccountHookDeps {
  readonly groups: Groups;
  readonly store: SharedRosterStore;
  readonly accounts: HostAccounts;
  readonly online: OnlineAccounts;
  readonly propagation: Propagation;
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Other nodes of a cluster learn that a vhost's accounts changed. */
  readonly caches: CachesApi;
  /** Reloads the groups from the tables (clear_cache), bringing online rosters up to date. */
  reload(): Promise<void>;
}

export function accountHooks(deps: AccountHookDeps): HookRegistration[] {
  const { groups, store, accounts, online, propagation, exclusive, caches } = deps;
  return [
    {
      // Other nodes and workers hold a vhost's account list only for its @all@ groups: while the vhost has none,
      // a new account changes nothing they show, and they are not asked to forget the list (a round trip to
      // every worker, awaited, per registration: 13–15 % of bulk `register`'s rate). Whether it has one is read
      // from the table, not from this process's copy, which a group created elsewhere reaches later: that
      // group is stored before any process reads the list for it, and this account before this hook, so
      // either the list read includes the account or this hook sees the group and tells the others.
      hook: 'register_user',
      handler: async (user, host) => {
        let shown = true;
        try {
          await exclusive(async () => {
            const bare = `${user}@${host}`;
            if (!groups.hasAllUsersGroups(host)) {
              await accounts.added(bare, host);
              shown = await store.hasAllUsersGroups(host);
              return;
            }
            // The accounts table has the new account already: it did not count before this hook.
            await propagation.aroundContact(bare, () => accounts.added(bare, host), { presence: false, assume: { bare, registered: false } });
          });
        } finally {
          if (shown) await caches.changed(SHARED_ROSTER_CACHE, host);
        }
      },
    },
    {
      // Every group loses the account: other nodes read the groups again.
      hook: 'remove_user',
      handler: (user, host) =>
        exclusive(async () => {
          const bare = `${user}@${host}`;
          // The accounts table has lost the account already: it still counted before this hook.
          await propagation.aroundContact(
            bare,
            async () => {
              await store.deleteAccount(bare);
              groups.removeAccount(bare);
              await accounts.removed(bare, host);
              online.delete(bare);
            },
            { presence: false, assume: { bare, registered: true } },
          );
        }).finally(() => caches.changed(SHARED_ROSTER_CACHE)),
    },
    {
      hook: 'clear_cache',
      handler: async () => {
        accounts.clear();
        await deps.reload();
      },
    },
  ];
}
