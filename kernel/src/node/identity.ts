/**
 * This node's identity in stored data. Each start records `node_name`; `mnesia_change` renames a previous
 * identity to the configured one (after the operator changed node_name), and modules with node-bound rows
 * follow through the `rename_node` hook.
 */
import type { Knex } from 'knex';
import type { HookBus } from '../hooks/hooks.js';
import type { Migration } from '@service/plugin-api';

export const NODES_TABLE = 'nodes';

export const NODE_MIGRATIONS: readonly Migration[] = [
  {
    id: '002_nodes',
    up: (knex) =>
      knex.schema.createTable(NODES_TABLE, (table) => {
        table.string('name', 191).notNullable().primary();
        table.bigInteger('first_started').notNullable();
        table.bigInteger('last_started').notNullable();
      }),
  },
];

export interface NodeRecord {
  name: string;
  first_started: number;
  last_started: number;
}

export class NodeIdentity {
  constructor(private readonly db: () => Knex) {}

  async recordStart(name: string, now = Date.now()): Promise<void> {
    const updated = await this.db()(NODES_TABLE).where({ name }).update({ last_started: now });
    if (!updated) await this.db()(NODES_TABLE).insert({ name, first_started: now, last_started: now });
  }

  async known(): Promise<NodeRecord[]> {
    const rows: NodeRecord[] = await this.db()(NODES_TABLE).select('name', 'first_started', 'last_started').orderBy('name');
    return rows.map((r) => ({ ...r, first_started: Number(r.first_started), last_started: Number(r.last_started) }));
  }

  /**
   * Renames `from` to `to` in one transaction, merging with an existing record of `to`; the hook lets
   * modules rename their own node-bound rows. Returns false when nothing is stored under `from`.
   */
  async rename(from: string, to: string, hooks: HookBus): Promise<boolean> {
    const renamed = await this.db().transaction(async (trx) => {
      const old: NodeRecord | undefined = await trx(NODES_TABLE).where({ name: from }).first();
      if (!old) return false;
      const current: NodeRecord | undefined = await trx(NODES_TABLE).where({ name: to }).first();
      await trx(NODES_TABLE).where({ name: from }).delete();
      if (current) {
        await trx(NODES_TABLE)
          .where({ name: to })
          .update({ first_started: Math.min(Number(old.first_started), Number(current.first_started)) });
      } else {
        await trx(NODES_TABLE).insert({ name: to, first_started: old.first_started, last_started: old.last_started });
      }
      return true;
    });
    if (renamed) await hooks.run('rename_node', from, to);
    return renamed;
  }
}
