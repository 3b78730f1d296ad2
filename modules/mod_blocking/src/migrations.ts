/**
 * The blocklist table, the same on SQLite, MariaDB and PostgreSQL: one row per blocked JID of an account.
 * A JID may be up to 3071 bytes, too long for an index on MariaDB: the key is the account, and a JID is
 * unique per account by the module's own checks (writes of one account are serialized).
 */
import { binaryCollation, type Migration } from '@service/plugin-api';

export const BLOCKLIST_TABLE = 'blocklist';

export const BLOCKING_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_blocklist',
    up: (knex) =>
      knex.schema.createTable(BLOCKLIST_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('host', 191).notNullable();
        table.string('username', 191).notNullable();
        table.text('jid').notNullable();
        table.bigInteger('created_at').notNullable();
        table.index(['host', 'username']);
      }),
  },
];
