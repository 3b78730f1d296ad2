/**
 * The nodes and items of every pubsub service in SQL (migrations.ts): a PEP service is an account's bare
 * JID. Publishing replaces an item of the same id and trims the node to its max_items in one transaction,
 * so that two workers publishing to one node keep it within its limit. Expired items (item_expire) are
 * never served, whether or not a purge has removed them yet.
 */
import { fromStoredXml, isUniqueViolation, retryingTransaction, toStoredXml, type Knex, type XmlElement } from '@service/plugin-api';
import { ITEMS_TABLE, NODES_TABLE } from './migrations.js';
import { parseStoredConfig, type NodeConfig } from './node-config.js';

export interface StoredNode {
  readonly id: number;
  readonly service: string;
  readonly node: string;
  readonly config: NodeConfig;
  readonly createdAt: number;
}

export interface StoredItem {
  readonly itemId: string;
  readonly publisher: string;
  /** The <item/> element with its payload. */
  readonly item: XmlElement;
  readonly updatedAt: number;
}

interface NodeRow {
  id: number | string;
  service: string;
  node: string;
  config: string;
  created_at: number | string;
}

interface ItemRow {
  item_id: string;
  publisher: string;
  xml: string;
  updated_at: number | string;
}

export class PubsubStore {
  constructor(private readonly db: Knex) {}

  async node(service: string, node: string): Promise<StoredNode | undefined> {
    const row = await this.db<NodeRow>(NODES_TABLE).where({ service, node }).first();
    return row ? nodeOf(row) : undefined;
  }

  async nodes(service: string): Promise<StoredNode[]> {
    const rows = await this.db<NodeRow>(NODES_TABLE).where({ service }).orderBy('node');
    return rows.map(nodeOf);
  }

  /** Nodes of several services at once (the PEP services of an account's contacts). */
  async nodesOf(services: readonly string[]): Promise<StoredNode[]> {
    if (services.length === 0) return [];
    const rows = await this.db<NodeRow>(NODES_TABLE).whereIn('service', [...services]);
    return rows.map(nodeOf);
  }

  /** Creates a node; undefined when it exists already (two creations racing: one wins). */
  async create(service: string, node: string, config: NodeConfig, now: number): Promise<StoredNode | undefined> {
    try {
      await this.db(NODES_TABLE).insert({ service, node, config: JSON.stringify(config), created_at: now });
    } catch (err) {
      if (isUniqueViolation(err)) return undefined;
      throw err;
    }
    return this.node(service, node);
  }

  /** The node, created with `config` when it does not exist (auto-create, XEP-0163 §3). */
  async ensure(service: string, node: string, config: NodeConfig, now: number): Promise<{ node: StoredNode; created: boolean }> {
    const existing = await this.node(service, node);
    if (existing) return { node: existing, created: false };
    const created = await this.create(service, node, config, now);
    if (created) return { node: created, created: true };
    return { node: (await this.node(service, node))!, created: false };
  }

  async setConfig(nodeId: number, config: NodeConfig): Promise<void> {
    await this.db(NODES_TABLE).where({ id: nodeId }).update({ config: JSON.stringify(config) });
    await this.trim(this.db, nodeId, config.maxItems);
  }

  async deleteNode(nodeId: number): Promise<void> {
    await this.db.transaction(async (trx) => {
      await trx(ITEMS_TABLE).where({ node_id: nodeId }).delete();
      await trx(NODES_TABLE).where({ id: nodeId }).delete();
    });
  }

  async purge(nodeId: number): Promise<void> {
    await this.db(ITEMS_TABLE).where({ node_id: nodeId }).delete();
  }

  /** Every node of a service and their items (an account removed). */
  async deleteService(service: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const ids = trx(NODES_TABLE).where({ service }).select('id');
      await trx(ITEMS_TABLE).whereIn('node_id', ids).delete();
      await trx(NODES_TABLE).where({ service }).delete();
    });
  }

  /** Stores an item (replacing one with its id) and keeps the node's newest `maxItems`. */
  async publish(nodeId: number, itemId: string, publisher: string, item: XmlElement, maxItems: number, now: number): Promise<void> {
    await retryingTransaction(this.db, async (trx) => {
      const xml = toStoredXml(item);
      const updated = await trx(ITEMS_TABLE).where({ node_id: nodeId, item_id: itemId }).update({ publisher, xml, updated_at: now });
      if (updated === 0) await trx(ITEMS_TABLE).insert({ node_id: nodeId, item_id: itemId, publisher, xml, created_at: now, updated_at: now });
      await this.trim(trx, nodeId, maxItems);
    });
  }

  /** Deletes an item; false when the node has no such item. */
  async retract(nodeId: number, itemId: string): Promise<boolean> {
    return (await this.db(ITEMS_TABLE).where({ node_id: nodeId, item_id: itemId }).delete()) > 0;
  }

  /**
   * The node's items newest first: the `max` newest, or those named by `ids` (in the order asked, unknown
   * ones left out). Items older than `expireBefore` (ms; 0: none) are left out.
   */
  async items(nodeId: number, options: { max?: number; ids?: readonly string[]; expireBefore?: number } = {}): Promise<StoredItem[]> {
    let query = this.db(ITEMS_TABLE).where({ node_id: nodeId }).select('item_id', 'publisher', 'xml', 'updated_at');
    if (options.expireBefore) query = query.where('updated_at', '>=', options.expireBefore);
    if (options.ids) query = query.whereIn('item_id', [...options.ids]);
    query = query.orderBy([
      { column: 'updated_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
    if (options.max !== undefined) query = query.limit(options.max);
    const rows = (await query) as ItemRow[];
    const items = rows.map(itemOf);
    if (!options.ids) return items;
    const byId = new Map(items.map((i) => [i.itemId, i]));
    return options.ids.map((id) => byId.get(id)).filter((i): i is StoredItem => i !== undefined);
  }

  /** Deletes the items of nodes with item_expire that have expired; how many went. */
  async deleteExpired(now: number): Promise<number> {
    let deleted = 0;
    const rows = await this.db<NodeRow>(NODES_TABLE).select('id', 'service', 'node', 'config', 'created_at');
    for (const node of rows.map(nodeOf)) {
      if (node.config.itemExpire <= 0) continue;
      deleted += await this.db(ITEMS_TABLE).where({ node_id: node.id }).where('updated_at', '<', now - node.config.itemExpire * 1000).delete();
    }
    return deleted;
  }

  /** Keeps the newest `keep` items of every node; how many went. */
  async keepNewest(keep: number): Promise<number> {
    let deleted = 0;
    const rows = await this.db<NodeRow>(NODES_TABLE).select('id');
    for (const row of rows) deleted += await this.trim(this.db, Number(row.id), keep);
    return deleted;
  }

  /** Deletes all but the newest `keep` items of a node. */
  private async trim(db: Knex | Knex.Transaction, nodeId: number, keep: number): Promise<number> {
    const kept = await db(ITEMS_TABLE)
      .where({ node_id: nodeId })
      .orderBy([
        { column: 'updated_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .offset(keep)
      .limit(1)
      .select('updated_at', 'id');
    const oldestGone = kept[0] as { updated_at: number | string; id: number | string } | undefined;
    if (!oldestGone) return 0;
    const at = Number(oldestGone.updated_at);
    const id = Number(oldestGone.id);
    // Everything from the first item past the limit on, in the same (updated_at, id) order.
    return db(ITEMS_TABLE)
      .where({ node_id: nodeId })
      .where((q) => q.where('updated_at', '<', at).orWhere((q2) => q2.where('updated_at', at).andWhere('id', '<=', id)))
      .delete();
  }
}

function nodeOf(row: NodeRow): StoredNode {
  return { id: Number(row.id), service: row.service, node: row.node, config: parseStoredConfig(row.config), createdAt: Number(row.created_at) };
}

function itemOf(row: ItemRow): StoredItem {
  return { itemId: row.item_id, publisher: row.publisher, item: fromStoredXml(row.xml), updatedAt: Number(row.updated_at) };
}
