/**
 * The archive's tables. mam_messages holds one row per archived message per owner; pages are read in
 * (created_at, id) order, so the indexes lead with the owner (host, username), then the peer when a `with`
 * filter narrows it, then time and id: a page is one range scan. created_at alone (and host + created_at)
 * serve the purges by age. mam_prefs holds each account's XEP-0313 preferences.
 */
import { binaryCollation, type Migration } from '@service/plugin-api';

export const MAM_TABLE = 'mam_messages';
export const MAM_PREFS_TABLE = 'mam_prefs';

export const MAM_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_mam_messages',
    up: (knex) =>
      knex.schema.createTable(MAM_TABLE, (table) => {
        binaryCollation(knex, table);
        table.bigIncrements('id');
        table.string('host', 191).notNullable();
        table.string('username', 191).notNullable();
        // The peer's bare JID (the `with` filter on a bare JID), and its full JID as the stanza gave it.
        table.string('peer', 191).notNullable();
        table.text('peer_full').notNullable();
        // XEP-0359 stanza-id given by this server; unique across the table, so a client's id names one row.
        table.string('stanza_id', 64).notNullable();
        table.bigInteger('created_at').notNullable();
        // 'in' (received by the owner) or 'out' (sent by the owner).
        table.string('direction', 3).notNullable();
        // 'chat' for one-to-one messages; 'groupchat' is reserved for room archives (the purges' `type`).
        table.string('kind', 16).notNullable();
        // mediumtext on MySQL (its text stops at 64 KiB, below the largest stanza a listener may accept).
        table.text('xml', 'mediumtext').notNullable();
        table.text('body', 'mediumtext').notNullable();
        table.unique(['stanza_id'], { indexName: 'mam_messages_stanza_id' });
        table.index(['host', 'username', 'created_at', 'id'], 'mam_messages_owner_time');
        table.index(['host', 'username', 'peer', 'created_at', 'id'], 'mam_messages_owner_peer_time');
        table.index(['created_at'], 'mam_messages_created_at');
        table.index(['host', 'created_at'], 'mam_messages_host_created_at');
      }),
  },
  {
    id: '002_mam_prefs',
    up: (knex) =>
      knex.schema.createTable(MAM_PREFS_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('host', 191).notNullable();
        table.string('username', 191).notNullable();
        table.string('default_mode', 8).notNullable();
        // JSON arrays of JIDs: read and written whole, never searched in SQL.
        table.text('always_jids').notNullable();
        table.text('never_jids').notNullable();
        table.primary(['host', 'username']);
      }),
  },
];
