/**
 * What mod_offline offers the admin commands: the queue of an account (get_offline_count, listing,
 * deleting) and the purges (delete_expired_messages, delete_old_messages, delete_old_messages_batch with
 * its status and abort). Times are milliseconds since the epoch.
 */
import type { XmlElement } from '@service/plugin-api';
import { accountKey, hostKey } from '@service/plugin-api';
import type { OfflineStore } from './store.js';


export interface OfflineMessage {
  /** Increases with storage order; what `delete` takes. */
  readonly id: number;
  /** The sender's full JID. */
  readonly from: string;
  readonly createdAt: number;
  /** undefined when the message does not expire. */
  readonly expiresAt: number | undefined;
  /** The message as it arrived (the delay stamp is added at delivery). */
  readonly stanza: XmlElement;
}

export interface OfflineApi {
  /** Messages waiting for the account, expired ones left out. */
  count(user: string, host: string): Promise<number>;
  /** The waiting messages in delivery order, expired ones left out; `limit` at most. */
  list(user: string, host: string, limit?: number): Promise<OfflineMessage[]>;
  /** Deletes the account's messages with these ids, or all of them without ids; returns how many went. */
  delete(user: string, host: string, ids?: readonly number[]): Promise<number>;
  /** Deletes the messages expired at `now` (default: now), on every host. */
  deleteExpired(now?: number): Promise<number>;
  /** Deletes the messages stored before `before`, on one host or all (delete_old_messages: now − days). */
  deleteStoredBefore(before: number, host?: string): Promise<number>;
  /** One batch: at most `batchSize` of the oldest messages of `host` stored before `before`. */
  deleteOldBatch(host: string, before: number, batchSize: number): Promise<number>;
}

export function offlineApi(store: OfflineStore): OfflineApi {
  return {
    count: (user, host) => store.count(accountKey(user, host), Date.now()),
    list: (user, host, limit) => store.list(accountKey(user, host), Date.now(), limit),
    delete(user, host, ids) {
      const account = accountKey(user, host);
      return ids === undefined ? store.deleteAccount(account) : store.delete(account, ids);
    },
    deleteExpired: (now = Date.now()) => store.deleteExpired(now),
    deleteStoredBefore: (before, host) => store.deleteStoredBefore(before, host === undefined ? undefined : hostKey(host)),
    deleteOldBatch: (host, before, batchSize) => store.deleteOldestBatch(hostKey(host), before, batchSize),
  };
}
