/**
 * The schema of the authentication records. One row per account; the primary key (host, username) also
 * serves listing a host's users in username order.
 */
import { sqlClientOf, type Migration } from '@service/plugin-api';
import { SCRAM_HASHES } from './scram.js';

export const ACCOUNTS_MIGRATION_OWNER = 'kernel';
export const USERS_TABLE = 'users';

export const ACCOUNT_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_users',
    up: (knex) =>
      knex.schema.createTable(USERS_TABLE, (table) => {
        const client = sqlClientOf(knex);
        if (client === 'mysql2') {
          // Binary collation: user names are compared and sorted by bytes, as on the other databases.
          // The default *_ci collations would make 'rené' and 'rene' the same primary key.
          table.charset('utf8mb4');
          table.collate('utf8mb4_bin');
        }
        table.string('host', 191).notNullable();
        if (client === 'pg') {
          // The "C" collation orders by bytes whatever the database locale, and keeps the index usable for it.
          table.specificType('username', 'varchar(191) collate "C"').notNullable();
        } else {
          table.string('username', 191).notNullable();
        }
        table.text('password').nullable();
        table.string('scram_salt', 64).nullable();
        table.integer('scram_iterations').nullable();
        for (const hash of SCRAM_HASHES) {
          table.string(`scram_${hash}_stored`, 128).nullable();
          table.string(`scram_${hash}_server`, 128).nullable();
        }
        table.bigInteger('created_at').notNullable();
        table.primary(['host', 'username']);
      }),
  },
];
