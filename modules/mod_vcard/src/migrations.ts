/** The table of vCards (XEP-0054): one vCard per account, kept as the XML the client set. */
import { binaryCollation, type Migration } from '@service/plugin-api';

export const VCARD_TABLE = 'vcards';

export const VCARD_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_vcards',
    up: (knex) =>
      knex.schema.createTable(VCARD_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('host', 191).notNullable();
        table.string('username', 191).notNullable();
        // mediumtext on MySQL (its text stops at 64 KiB, less than a vCard with a photo may take).
        table.text('xml', 'mediumtext').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.primary(['host', 'username']);
      }),
  },
];
