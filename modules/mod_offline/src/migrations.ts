/**
 * The table of offline messages. Rows are delivered in id order (the order they were stored); indexes
 * serve the per-account queue (host, username, id), the purges by age (created_at, and host + created_at
 * for the batched purge of one host) and the purge of expired messages (expires_at).
 */
import { binaryCollation, type Migration } from '@service/plugin-api';

export const OFFLINE_TABLE = 'offline_messages';

export const OFFLINE_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_offline_messages',
    up: (knex) =>
      knex.schema.createTable(OFFLINE_TABLE, (table) => {
        binaryCollation(knex, table);
        table.bigIncrements('id');
        table.string('host', 191).notNullable();
        table.string('username', 191).notNullable();
        // The sender's full JID, for listings without parsing the stanza.
        table.text('from_jid').notNullable();
        table.bigInteger('created_at').notNullable();
        // XEP-0079 expire-at / XEP-0023: never delivered after this time; null when the message does not expire.
        table.bigInteger('expires_at').nullable();
        // mediumtext on MySQL (its text stops at 64 KiB, below the largest stanza a listener may accept).
        table.text('xml', 'mediumtext').notNullable();
        table.index(['host', 'username', 'id'], 'offline_messages_account');
        table.index(['created_at'], 'offline_messages_created_at');
        table.index(['host', 'created_at'], 'offline_messages_host_created_at');
        table.index(['expires_at'], 'offline_messages_expires_at');
      }),
  },
];
