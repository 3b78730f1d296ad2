/**
 * export2sql's view of which rows of a (SQLite) source table belong to one virtual host: the rules of
 * ../host-rows.ts, on the tables the export reads.
 */
import type { Knex } from 'knex';
import { hostRowsOf, type HostScope } from '../host-rows.js';
import type { TableInfo } from './tables.js';

export type { HostScope } from '../host-rows.js';

const columnsIn = (tables: ReadonlyMap<string, TableInfo>) => (name: string) => tables.get(name)?.columns.map((c) => c.name);

/** How a table is scoped to a host; `tables` are all the tables exported, to find a parent's columns. */
export function hostScope(table: TableInfo, tables: ReadonlyMap<string, TableInfo>): HostScope {
  return hostRowsOf(table.name, columnsIn(tables), '').scope;
}

/** Restricts `query` (on `table` alone) to the rows of `host`. */
export function whereHost(query: Knex.QueryBuilder, table: TableInfo, tables: ReadonlyMap<string, TableInfo>, host: string): Knex.QueryBuilder {
  const rows = hostRowsOf(table.name, columnsIn(tables), host);
  return rows.where ? query.whereRaw(rows.where, [...rows.params]) : query;
}
