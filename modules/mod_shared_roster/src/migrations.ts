/**
 * The shared roster tables, the same on SQLite, MariaDB and PostgreSQL:
 *
 *   shared_roster_groups     one row per group of a vhost: its label, description, and whether every
 *                            account of the vhost (@all@) or every online one (@online@) is a member.
 *   shared_roster_displayed  the groups a group displays to its members, in the order they were added.
 *   shared_roster_members    the explicit members: accounts of any served vhost.
 *
 * Keys stay within MariaDB's 3072-byte index limit in utf8mb4: the widest are four 191-character columns,
 * 3056 bytes.
 */
import { binaryCollation, type Migration } from '@service/plugin-api';

export const GROUPS_TABLE = 'shared_roster_groups';
export const DISPLAYED_TABLE = 'shared_roster_displayed';
export const MEMBERS_TABLE = 'shared_roster_members';

/** The width of group identifiers and labels; a label is also a roster group name, which mod_roster limits the same. */
export const NAME_LENGTH = 191;

export const SHARED_ROSTER_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_shared_roster_groups',
    up: (knex) =>
      knex.schema.createTable(GROUPS_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('host', 191).notNullable();
        table.string('name', NAME_LENGTH).notNullable();
        table.string('label', NAME_LENGTH).notNullable().defaultTo('');
        // mediumtext on MariaDB, where text would stop at 64 KiB, below the largest request body.
        table.text('description', 'mediumtext').notNullable();
        table.boolean('all_users').notNullable().defaultTo(false);
        table.boolean('online_users').notNullable().defaultTo(false);
        table.primary(['host', 'name']);
      }),
  },
  {
    id: '002_shared_roster_displayed',
    up: (knex) =>
      knex.schema.createTable(DISPLAYED_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('host', 191).notNullable();
        table.string('name', NAME_LENGTH).notNullable();
        table.string('displayed_host', 191).notNullable();
        table.string('displayed_name', NAME_LENGTH).notNullable();
        table.integer('position').notNullable();
        table.primary(['host', 'name', 'displayed_host', 'displayed_name']);
        // Deleting a group removes it from the groups that display it.
        table.index(['displayed_host', 'displayed_name'], 'shared_roster_displayed_target');
      }),
  },
  {
    id: '003_shared_roster_members',
    up: (knex) =>
      knex.schema.createTable(MEMBERS_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('host', 191).notNullable();
        table.string('name', NAME_LENGTH).notNullable();
        table.string('user_host', 191).notNullable();
        table.string('username', 191).notNullable();
        table.primary(['host', 'name', 'user_host', 'username']);
        // Removing an account removes it from every group.
        table.index(['user_host', 'username'], 'shared_roster_members_account');
      }),
  },
];
