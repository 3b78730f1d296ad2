/**
 * Accounts: passwords and existence (change_password, check_account, check_password, check_password_hash),
 * bans (ban_account, get_ban_details, unban_account), purging inactive accounts (delete_old_users,
 * delete_old_users_vhost), and statistics (stats, stats_host).
 */
import type { HandlersFor } from '@service/plugin-api';
import type { AdminContext } from '../context.js';
import { banCommands, banHandlers } from './ban.js';
import { oldUserCommands, oldUserHandlers } from './old-users.js';
import { passwordCommands, passwordHandlers } from './passwords.js';
import { statsCommands, statsHandlers } from './stats.js';

export const accountCommands = [...passwordCommands, ...banCommands, ...oldUserCommands, ...statsCommands] as const;

/** Also makes bans bite: it joins the login hooks under the module's name (see ban-enforcement.ts). */
export function accountHandlers(ctx: AdminContext): HandlersFor<typeof accountCommands> {
  return {
    ...passwordHandlers(ctx),
    ...banHandlers(ctx),
    ...oldUserHandlers(ctx),
    ...statsHandlers(ctx),
  };
}
