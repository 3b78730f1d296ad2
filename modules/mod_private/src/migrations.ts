/**
 * The table of private XML storage: one row per account and namespace (XEP-0049 looks data up by the
 * namespace of its root element).
 */
import { binaryCollation, type Migration } from '@service/plugin-api';

export const PRIVATE_TABLE = 'private_storage';

/** Indexed varchar width: utf8mb4 keys of older MySQL row formats stop at 767 bytes. */
export const MAX_NAMESPACE_LENGTH = 191;

export const PRIVATE_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_private_storage',
    up: (knex) =>
      knex.schema.createTable(PRIVATE_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('host', 191).notNullable();
        table.string('username', 191).notNullable();
        table.string('namespace', MAX_NAMESPACE_LENGTH).notNullable();
        // mediumtext on MySQL (its text stops at 64 KiB); text elsewhere.
        table.text('xml', 'mediumtext').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.primary(['host', 'username', 'namespace']);
      }),
  },
];
