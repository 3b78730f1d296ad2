/**
 * The tables each migration group creates, with their columns, found by running the migrations on a
 * private in-memory SQLite database: the migrations are the only description of the schema, and SQLite is
 * the dialect of the stores export2sql reads, so the columns found here are those of the source tables.
 */
import knexFactory from 'knex';
import { MIGRATIONS_TABLE, runMigrations } from '../../storage/migrations.js';
import type { MigrationGroup } from './stores.js';

export interface ColumnInfo {
  readonly name: string;
  /** The declared SQLite type, lower case: `varchar(191)`, `bigint`, `boolean`, `integer`, `text`… */
  readonly type: string;
  /** Part of the primary key. */
  readonly primaryKey: boolean;
}

export interface TableInfo {
  readonly name: string;
  readonly columns: readonly ColumnInfo[];
  /** The single integer primary key (`increments()`), whose sequence PostgreSQL must be told about. */
  readonly serial?: string;
}

interface SqliteColumn {
  name: string;
  type: string;
  pk: number;
}

/** For each group (same order), the tables its migrations create, in creation order. */
export async function tablesOfGroups(groups: readonly MigrationGroup[]): Promise<TableInfo[][]> {
  const scratch = knexFactory({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true, pool: { min: 1, max: 1 } });
  try {
    const known = new Set<string>([MIGRATIONS_TABLE]);
    const result: TableInfo[][] = [];
    for (const group of groups) {
      await runMigrations(scratch, group.owner, group.migrations);
      // rowid order of sqlite_master is creation order.
      const names: Array<{ name: string }> = await scratch.raw("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by rowid");
      const tables: TableInfo[] = [];
      for (const { name } of names) {
        if (known.has(name)) continue;
        known.add(name);
        const raw: SqliteColumn[] = await scratch.raw(`pragma table_info("${name.replace(/"/g, '""')}")`);
        const columns = raw.map((c) => ({ name: c.name, type: c.type.toLowerCase(), primaryKey: c.pk > 0 }));
        const keys = columns.filter((c) => c.primaryKey);
        const serial = keys.length === 1 && keys[0]!.type === 'integer' ? keys[0]!.name : undefined;
        tables.push({ name, columns, ...(serial ? { serial } : {}) });
      }
      result.push(tables);
    }
    return result;
  } finally {
    await scratch.destroy();
  }
}
