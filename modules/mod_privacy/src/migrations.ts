/**
 * The privacy tables, the same on SQLite, MariaDB and PostgreSQL:
 *
 *   privacy_list_items     one row per item of a list; a list exists while it has items (XEP-0016 removes
 *                          a list by sending it empty). `position` is the item's 'order' (xs:unsignedInt,
 *                          hence bigint); the stanza kinds are one boolean each, none set meaning all.
 *   privacy_default_lists  the name of each account's default list.
 *
 * Active lists belong to sessions and are not stored. Keys fit MariaDB's 3072-byte index limit in utf8mb4
 * (3 × 191 × 4 + 8 bytes).
 */
import { binaryCollation, type Migration } from '@service/plugin-api';

export const ITEMS_TABLE = 'privacy_list_items';
export const DEFAULTS_TABLE = 'privacy_default_lists';

export const PRIVACY_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_privacy_list_items',
    up: (knex) =>
      knex.schema.createTable(ITEMS_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('host', 191).notNullable();
        table.string('username', 191).notNullable();
        table.string('list_name', 191).notNullable();
        table.bigInteger('position').notNullable();
        table.string('item_type', 16).nullable();
        table.text('item_value').nullable();
        table.string('action', 8).notNullable();
        table.boolean('match_message').notNullable().defaultTo(false);
        table.boolean('match_iq').notNullable().defaultTo(false);
        table.boolean('match_presence_in').notNullable().defaultTo(false);
        table.boolean('match_presence_out').notNullable().defaultTo(false);
        table.primary(['host', 'username', 'list_name', 'position']);
      }),
  },
  {
    id: '002_privacy_default_lists',
    up: (knex) =>
      knex.schema.createTable(DEFAULTS_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('host', 191).notNullable();
        table.string('username', 191).notNullable();
        table.string('list_name', 191).notNullable();
        table.primary(['host', 'username']);
      }),
  },
];
