/**
 * Accounts (change_password, check_*, ban_account, get_ban_details, unban_account, delete_old_users*), statistics (stats, stats_host), last activity (get_last, set_last), offline (get_offline_count) and private storage (private_get, private_set).
 */
import type { HandlersFor } from '@service/kernel';
import type { AdminContext } from '../context.js';

export const accountCommands = [] as const;

export function accountHandlers(_ctx: AdminContext): HandlersFor<typeof accountCommands> {
  return {} as HandlersFor<typeof accountCommands>;
}
