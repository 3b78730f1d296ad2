/**
 * The push sessions' table: one row per app server node an account enabled (XEP-0357 §5), unique by
 * account, app server and node. The node is free text of any length, so the key holds its SHA-256
 * (`node_hash`), which is also what a notification's IQ id carries to find the row again when the app
 * server answers with an error. `session_id` names the client session that enabled it (its stream
 * management id too), so that a detached session wakes its own device. `enabled_at` is renewed by each
 * <enable/> and is what delete_old_push_sessions ages.
 */
import { binaryCollation, type Migration } from '@service/plugin-api';

export const PUSH_TABLE = 'push_sessions';

export const PUSH_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_push_sessions',
    up: (knex) =>
      knex.schema.createTable(PUSH_TABLE, (table) => {
        binaryCollation(knex, table);
        table.string('host', 191).notNullable();
        table.string('username', 191).notNullable();
        // The app server's JID as the client gave it, prepared (longer ones are refused at <enable/>).
        table.string('service', 191).notNullable();
        table.text('node').notNullable();
        table.string('node_hash', 64).notNullable();
        table.string('session_id', 64).notNullable();
        // The publish-options data form (XEP-0004) to send with every notification; '' when none.
        table.text('publish_options').notNullable();
        table.bigInteger('enabled_at').notNullable();
        table.unique(['host', 'username', 'service', 'node_hash'], { indexName: 'push_sessions_account_node' });
        table.index(['enabled_at'], 'push_sessions_enabled_at');
      }),
  },
];
