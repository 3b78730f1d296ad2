/**
 * What mod_last offers the admin commands (get_last, set_last, delete_old_users): the stored last
 * activity of accounts. Timestamps are milliseconds since the epoch (set_last's seconds times 1000).
 */
import { accountKey, hostKey } from '@service/plugin-api';
import { secondsSince, type LastActivity } from './activity.js';

export interface LastActivityRecord {
  /** When the account's last session ended (or what set_last said), in milliseconds since the epoch. */
  readonly timestamp: number;
  /** Whole seconds from then to now. */
  readonly seconds: number;
  /** The status text of its last presence; '' when it had none. */
  readonly status: string;
}

export interface LastActivityApi {
  /** The stored last activity, or undefined when none was ever recorded. */
  get(user: string, host: string): Promise<LastActivityRecord | undefined>;
  /** Whether the account has an available session now (XEP-0012 then answers 0 seconds). */
  isOnline(user: string, host: string): Promise<boolean>;
  set(user: string, host: string, timestamp: number, status: string): Promise<void>;
  delete(user: string, host: string): Promise<boolean>;
  /** The accounts of `host` whose recorded last activity is at or after `since` (ms), sorted. */
  activeSince(host: string, since: number): Promise<string[]>;
}

export function lastActivityApi(activity: LastActivity): LastActivityApi {
  return {
    async get(user, host) {
      const stored = await activity.stored(accountKey(user, host));
      return stored && { timestamp: stored.logoutAt, seconds: secondsSince(stored.logoutAt), status: stored.status };
    },
    isOnline: (user, host) => activity.isOnline(accountKey(user, host)),
    set: (user, host, timestamp, status) => activity.record(accountKey(user, host), { logoutAt: Math.trunc(timestamp), status }),
    delete: (user, host) => activity.delete(accountKey(user, host)),
    activeSince: (host, since) => activity.loggedOutSince(hostKey(host), since),
  };
}
