/**
 * mod_muc's tables (prefixed muc_): persistent rooms with their options as JSON, their affiliations and
 * MUC/Sub subscriptions, the nicks registered on each service (XEP-0045 §7.10), and the history of
 * persistent rooms, so that a restart keeps what the room showed and when it was last active; and the
 * rooms' own vCards (002, added after 001 shipped: a migration of its own, so that existing databases get
 * the table too); the case-folded key of registered nicks (003).
 */
import { binaryCollation, type Migration } from '@service/plugin-api';

export const ROOMS_TABLE = 'muc_rooms';
export const AFFILIATIONS_TABLE = 'muc_affiliations';
export const SUBSCRIPTIONS_TABLE = 'muc_subscriptions';
export const REGISTERED_TABLE = 'muc_registered';
export const HISTORY_TABLE = 'muc_history';
export const VCARDS_TABLE = 'muc_room_vcards';

export const MUC_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_muc_rooms',
    up: (knex) =>
      knex.schema
        .createTable(ROOMS_TABLE, (table) => {
          binaryCollation(knex, table);
          table.string('service', 191).notNullable();
          table.string('name', 191).notNullable();
          table.text('options').notNullable();
          table.text('subject').notNullable();
          table.string('subject_nick', 191).notNullable();
          table.bigInteger('created_at').notNullable();
          table.bigInteger('last_activity').notNullable();
          table.primary(['service', 'name']);
        })
        .createTable(AFFILIATIONS_TABLE, (table) => {
          binaryCollation(knex, table);
          table.string('service', 191).notNullable();
          table.string('room', 191).notNullable();
          table.string('jid', 191).notNullable();
          table.string('affiliation', 16).notNullable();
          table.text('reason').notNullable();
          table.primary(['service', 'room', 'jid']);
        })
        .createTable(SUBSCRIPTIONS_TABLE, (table) => {
          binaryCollation(knex, table);
          table.string('service', 191).notNullable();
          table.string('room', 191).notNullable();
          table.string('jid', 191).notNullable();
          table.string('nick', 191).notNullable();
          // The subscribed nodes, as a JSON list.
          table.text('nodes').notNullable();
          table.primary(['service', 'room', 'jid']);
          table.index(['jid'], 'muc_subscriptions_jid');
        })
        .createTable(REGISTERED_TABLE, (table) => {
          binaryCollation(knex, table);
          table.string('service', 191).notNullable();
          table.string('jid', 191).notNullable();
          table.string('nick', 191).notNullable();
          table.primary(['service', 'jid']);
          table.unique(['service', 'nick'], { indexName: 'muc_registered_nick' });
        })
        .createTable(HISTORY_TABLE, (table) => {
          binaryCollation(knex, table);
          table.bigIncrements('id');
          table.string('service', 191).notNullable();
          table.string('room', 191).notNullable();
          table.bigInteger('created_at').notNullable();
          // mediumtext on MySQL: its text stops at 64 KiB.
          table.text('xml', 'mediumtext').notNullable();
          table.index(['service', 'room', 'id'], 'muc_history_room');
        }),
  },
  {
    id: '002_muc_room_vcards',
    up: (knex) =>
      knex.schema.createTable(VCARDS_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('service', 191).notNullable();
        table.string('room', 191).notNullable();
        // The vCard as stored XML; mediumtext on MySQL, whose text stops at 64 KiB (a photo is inside).
        table.text('xml', 'mediumtext').notNullable();
        table.primary(['service', 'room']);
      }),
  },
  {
    // A registered nick is reserved in every case and width (nickKey: enforced, case-folded), not only in
    // the form it was registered in: its key is unique per service, the nick keeps the form shown. Rows
    // registered before have no key (NULL, which unique indexes let repeat) and match as they were written.
    id: '003_muc_registered_nick_key',
    up: (knex) =>
      knex.schema.alterTable(REGISTERED_TABLE, (table) => {
        table.string('nick_key', 191).nullable();
        table.unique(['service', 'nick_key'], { indexName: 'muc_registered_nick_key' });
      }),
  },
];
