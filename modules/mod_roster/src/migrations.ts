/**
 * The roster tables, the same on SQLite, MariaDB and PostgreSQL:
 *
 *   roster_items     one row per (owner, contact): the name, the subscription state, the pre-approval, and
 *                    a stored inbound request (RFC 6121 §3.1.3: kept until answered, re-sent at login).
 *                    `in_roster` is false for a request from someone the owner has not added.
 *   roster_groups    one row per group of an item.
 *   roster_versions  the roster version of each account (XEP-0237).
 *
 * Keys stay within MariaDB's 3072-byte index limit in utf8mb4: the widest, roster_groups' primary key,
 * is 4 × 191 characters × 4 bytes = 3056 bytes.
 */
import { binaryCollation, type Migration } from '@service/plugin-api';

export const ITEMS_TABLE = 'roster_items';
export const GROUPS_TABLE = 'roster_groups';
export const VERSIONS_TABLE = 'roster_versions';

/** Column widths, also the limits a roster set is checked against. */
export const JID_LENGTH = 191;
export const GROUP_LENGTH = 191;

export const ROSTER_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_roster_items',
    up: (knex) =>
      knex.schema.createTable(ITEMS_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('host', 191).notNullable();
        table.string('username', 191).notNullable();
        table.string('jid', JID_LENGTH).notNullable();
        table.text('nick').nullable();
        table.string('subscription', 4).notNullable().defaultTo('none');
        table.boolean('pending_out').notNullable().defaultTo(false);
        table.boolean('pending_in').notNullable().defaultTo(false);
        table.boolean('approved').notNullable().defaultTo(false);
        table.boolean('in_roster').notNullable().defaultTo(true);
        // The inbound subscription request as received (status, nick…), re-delivered while pending;
        // MEDIUMTEXT on MariaDB, where TEXT would stop at 64 KiB, below the largest stanza accepted.
        table.text('request', 'mediumtext').nullable();
        table.primary(['host', 'username', 'jid']);
      }),
  },
  {
    id: '002_roster_groups',
    up: (knex) =>
      knex.schema.createTable(GROUPS_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('host', 191).notNullable();
        table.string('username', 191).notNullable();
        table.string('jid', JID_LENGTH).notNullable();
        table.string('group_name', GROUP_LENGTH).notNullable();
        table.primary(['host', 'username', 'jid', 'group_name']);
      }),
  },
  {
    id: '003_roster_versions',
    up: (knex) =>
      knex.schema.createTable(VERSIONS_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('host', 191).notNullable();
        table.string('username', 191).notNullable();
        table.bigInteger('version').notNullable();
        table.primary(['host', 'username']);
      }),
  },
];
