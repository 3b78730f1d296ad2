/**
 * The tables of mod_pubsub, the same on SQLite, MariaDB and PostgreSQL. pubsub_nodes holds one row per
 * node of a service: a PEP service is an account's bare JID, so removing an account is one range on
 * `service`. pubsub_items holds the persistent items of each node, read newest first (updated_at, id);
 * the purges read by age across nodes. pubsub_caps keeps the features of verified entity capabilities
 * (XEP-0115) by hash, so that every worker finds what one of them verified. pubsub_affiliations and
 * pubsub_subscriptions belong to the nodes of the pubsub service (pubsub.@HOST@): PEP nodes have only their
 * account as owner and implicit subscriptions (presence and caps), so they have no rows there.
 */
import { binaryCollation, type Migration } from '@service/plugin-api';

export const NODES_TABLE = 'pubsub_nodes';
export const ITEMS_TABLE = 'pubsub_items';
export const CAPS_TABLE = 'pubsub_caps';
export const AFFILIATIONS_TABLE = 'pubsub_affiliations';
export const SUBSCRIPTIONS_TABLE = 'pubsub_subscriptions';

export const PUBSUB_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_pubsub_nodes_items',
    up: (knex) =>
      knex.schema
        .createTable(NODES_TABLE, (table) => {
        binaryCollation(knex, table);
        table.bigIncrements('id');
        // An account's bare JID (PEP) or a pubsub service's domain.
        table.string('service', 191).notNullable();
        table.string('node', 191).notNullable();
        // The node's configuration as JSON (node-config.ts): read and written whole.
        table.text('config').notNullable();
        table.bigInteger('created_at').notNullable();
        table.unique(['service', 'node'], { indexName: 'pubsub_nodes_service_node' });
      })
        .createTable(ITEMS_TABLE, (table) => {
        binaryCollation(knex, table);
        table.bigIncrements('id');
        table.bigInteger('node_id').notNullable();
        table.string('item_id', 191).notNullable();
        // The publisher's full JID as it published (a full JID may be longer than a key column).
        table.text('publisher').notNullable();
        // The <item/> element with its payload, as stored XML; mediumtext on MySQL (avatars are large).
        table.text('xml', 'mediumtext').notNullable();
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.unique(['node_id', 'item_id'], { indexName: 'pubsub_items_node_item' });
        table.index(['node_id', 'updated_at', 'id'], 'pubsub_items_node_time');
        table.index(['updated_at'], 'pubsub_items_updated_at');
      })
        .createTable(CAPS_TABLE, (table) => {
        binaryCollation(knex, table);
        // `<hash> <ver>`: a verified ver names the same features everywhere.
        table.string('caps', 191).notNullable().primary();
        // JSON array of feature vars.
        table.text('features', 'mediumtext').notNullable();
        table.bigInteger('created_at').notNullable();
      }),
  },
  {
    id: '002_pubsub_affiliations_subscriptions',
    up: (knex) =>
      knex.schema
        .createTable(AFFILIATIONS_TABLE, (table) => {
          binaryCollation(knex, table);
          table.bigInteger('node_id').notNullable();
          // A bare JID.
          table.string('jid', 191).notNullable();
          // owner, publisher, member or outcast ('none' is no row).
          table.string('affiliation', 16).notNullable();
          table.primary(['node_id', 'jid']);
          table.index(['jid'], 'pubsub_affiliations_jid');
        })
        .createTable(SUBSCRIPTIONS_TABLE, (table) => {
          binaryCollation(knex, table);
          table.bigInteger('node_id').notNullable();
          // The JID subscribed, bare or full as the subscriber asked; its bare form for an account's removal.
          table.string('jid', 191).notNullable();
          table.string('bare', 191).notNullable();
          table.string('subid', 64).notNullable();
          table.bigInteger('created_at').notNullable();
          table.primary(['node_id', 'jid']);
          table.index(['bare'], 'pubsub_subscriptions_bare');
        }),
  },
];
