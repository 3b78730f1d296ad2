/**
 * mnesia_info, mnesia_table_info, mnesia_list_tables and mnesia_table_change_storage: SQLite facts about the
 * covered stores. Row counts are exact (count(*)); sizes come from SQLite's dbstat table (pages of the table
 * and of its indexes). Every table is `disc_copies`: it lives in a SQLite file on disk, and SQLite's page
 * cache keeps what is used in memory. ram_copies and disc_only_copies have no meaning here and are refused.
 */
import { statSync } from 'node:fs';
import { badArgument, failed } from '@service/plugin-api';
import type { KernelServices } from '../../modules/services.js';
import { fresh, holdingConnection, knexOf, liveStores, liveTables, quoteIdent, resolveTable, type Connection, type StoreName, type TableRef } from './stores.js';

export const STORAGE_TYPE = 'disc_copies';
const STORAGE_TYPES = ['ram_copies', 'disc_copies', 'disc_only_copies'];

export interface TableFacts {
  name: string;
  storage_type: string;
  elements: number;
  memory_kb: number;
  memory_mb: number;
}

/** Bytes of each table with its indexes, from dbstat. */
function sizes(db: Connection): Map<string, number> {
  const owner = new Map((fresh(db, `SELECT name, tbl_name FROM main.sqlite_master WHERE type IN ('table', 'index')`).all() as Array<{ name: string; tbl_name: string }>).map((r) => [r.name, r.tbl_name]));
  const out = new Map<string, number>();
  for (const row of fresh(db, `SELECT name, sum(pgsize) AS bytes FROM dbstat('main') GROUP BY name`).all() as Array<{ name: string; bytes: number }>) {
    const table = owner.get(row.name) ?? row.name;
    out.set(table, (out.get(table) ?? 0) + Number(row.bytes));
  }
  return out;
}

function count(db: Connection, table: string): number {
  return Number((fresh(db, `SELECT count(*) AS n FROM ${quoteIdent(table)}`).get() as { n: number }).n);
}

async function factsOf(services: KernelServices, refs: TableRef[]): Promise<TableFacts[]> {
  const out: TableFacts[] = [];
  for (const store of new Set(refs.map((r) => r.store))) {
    await holdingConnection(knexOf(services, store), async (db) => {
      const bytes = sizes(db);
      for (const ref of refs.filter((r) => r.store === store)) {
        const b = bytes.get(ref.table) ?? 0;
        out.push({ name: ref.display, storage_type: STORAGE_TYPE, elements: count(db, ref.table), memory_kb: Math.round(b / 1024), memory_mb: Math.round(b / 1024 / 1024) });
      }
    });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

export async function listTables(services: KernelServices): Promise<TableFacts[]> {
  return factsOf(services, await liveTables(services));
}

export async function tableInfo(services: KernelServices, tableArg: string): Promise<string> {
  const ref = await resolveTable(services, 'table', tableArg);
  const [facts] = await factsOf(services, [ref]);
  const store = liveStores(services).stores.find((s) => s.name === ref.store)!;
  const detail = await holdingConnection(knexOf(services, ref.store), async (db) => {
    const columns = fresh(db, `PRAGMA table_info(${quoteIdent(ref.table)})`).all() as Array<{ name: string; type: string; notnull: number; pk: number }>;
    const indexes = fresh(db, `SELECT name FROM main.sqlite_master WHERE type = 'index' AND tbl_name = ? ORDER BY name`).all(ref.table) as Array<{ name: string }>;
    return { columns, indexes };
  });
  return [
    `name: ${facts!.name}`,
    `store: ${ref.store} (${store.file})`,
    `storage_type: ${STORAGE_TYPE}`,
    `elements: ${facts!.elements}`,
    `memory_kb: ${facts!.memory_kb}`,
    `memory_mb: ${facts!.memory_mb}`,
    `attributes: ${detail.columns.map((c) => `${c.name} ${c.type || 'ANY'}${c.pk ? ' primary key' : ''}${c.notnull ? ' not null' : ''}`).join(', ')}`,
    `indexes: ${detail.indexes.map((i) => i.name).join(', ') || 'none'}`,
  ].join('\n');
}

export async function info(services: KernelServices): Promise<string> {
  const { stores, excluded } = liveStores(services);
  const lines: string[] = [`node: ${services.config().node_name}`, `storage_type of every table: ${STORAGE_TYPE} (SQLite files on disk, cached in memory)`];
  for (const store of stores) {
    const facts = await holdingConnection(knexOf(services, store.name), async (db) => ({
      version: (fresh(db, 'SELECT sqlite_version() AS v').get() as { v: string }).v,
      pageSize: Number(db.pragma('page_size', { simple: true })),
      pages: Number(db.pragma('page_count', { simple: true })),
      free: Number(db.pragma('freelist_count', { simple: true })),
      journal: String(db.pragma('journal_mode', { simple: true })),
    }));
    const tables = (await liveTables(services)).filter((t) => t.store === store.name);
    const rows = (await factsOf(services, tables)).reduce((n, t) => n + t.elements, 0);
    let size = 0;
    for (const suffix of ['', '-wal']) size += statSafe(store.file + suffix);
    lines.push(
      `${store.name} store: ${store.file}`,
      `  sqlite ${facts.version}, journal_mode ${facts.journal}, page_size ${facts.pageSize}, pages ${facts.pages} (${facts.free} free), file size ${size} bytes (with WAL)`,
      `  tables: ${tables.length}, rows: ${rows}`,
    );
  }
  if (!stores.length) lines.push('no SQLite database: the embedded store is empty');
  if (excluded) lines.push(excluded);
  return lines.join('\n');
}

function statSafe(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

export async function changeStorage(services: KernelServices, tableArg: string, type: string): Promise<string> {
  if (!STORAGE_TYPES.includes(type)) throw badArgument('storage_type', `unknown storage_type '${type}': expected ${STORAGE_TYPES.join(', ')}`);
  const ref = await resolveTable(services, 'table', tableArg);
  if (type === STORAGE_TYPE) return `Table ${ref.display} already has storage type ${STORAGE_TYPE}: nothing to change`;
  throw failed(
    `storage type ${type} is not available for table ${ref.display}: every table lives in a SQLite file on disk with its used pages cached in memory (disc_copies); there is no RAM-only or uncached variant. Nothing was changed`,
  );
}

export type { StoreName };
