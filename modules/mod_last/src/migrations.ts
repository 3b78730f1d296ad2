/**
 * The table of last activity (XEP-0012): when each account's last session ended and the status text of
 * its last presence. Indexed by (host, logout_at) for "accounts inactive for N days" (delete_old_users).
 */
import { binaryCollation, type Migration } from '@service/plugin-api';

export const LAST_TABLE = 'last_activity';

export const LAST_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_last_activity',
    up: (knex) =>
      knex.schema.createTable(LAST_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('host', 191).notNullable();
        table.string('username', 191).notNullable();
        table.bigInteger('logout_at').notNullable();
        table.text('status').notNullable();
        table.primary(['host', 'username']);
        table.index(['host', 'logout_at'], 'last_activity_host_logout_at');
      }),
  },
];
