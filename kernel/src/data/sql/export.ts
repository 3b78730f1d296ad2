/**
 * export2sql: one virtual host's data as a SQL file for an empty MariaDB/MySQL or PostgreSQL database.
 * The file creates the schema exactly as this server's migrations do on that database (rendered from the
 * same migration code, bookkeeping rows included, so a server started there finds its schema current),
 * then inserts the host's rows read from the stores that are SQLite files — the embedded store and, when
 * sql_type is sqlite, the SQL store. Tables an external SQL database already holds are left out.
 *
 * Rows are read in pages by rowid and written as they come, with a pause for the event loop between pages;
 * a failure leaves no file (output-file.ts).
 */
import type { Knex } from 'knex';
import knexFactory from 'knex';
import type { DbKind, Migration } from '@service/plugin-api';
import { failed } from '@service/plugin-api';
import type { Storage } from '../../storage/database.js';
import { pendingMigrations, renderSchema } from '../../storage/migrations.js';
import { KERNEL_VERSION } from '../../version.js';
import type { Dialect } from './dialect.js';
import { hostScope, whereHost } from './host-rows.js';
import { OutputFile } from './output-file.js';
import type { MigrationGroup } from './stores.js';
import { tablesOfGroups, type TableInfo } from './tables.js';

/** Rows read per query. */
const PAGE_ROWS = 500;
/** An INSERT statement ends after this many rows or about this many bytes of values, whichever comes first. */
const STATEMENT_ROWS = 200;
const STATEMENT_BYTES = 256 * 1024;
const ROWID = '__export_rowid';

export interface ExportRequest {
  readonly host: string;
  readonly file: string;
  readonly dataDir: string;
  readonly dialect: Dialect;
  readonly groups: readonly MigrationGroup[];
  readonly storage: Storage;
  readonly progress: (done: number, total: number, label: string) => void;
}

export interface ExportReport {
  readonly file: string;
  /** Rows written per table. */
  readonly rows: Readonly<Record<string, number>>;
  /** Groups left out because an external SQL database holds them already. */
  readonly skipped: readonly string[];
}

interface Source {
  readonly group: MigrationGroup;
  /** The SQLite stores holding the group's tables (two when a module's hosts use both stores). */
  readonly kinds: DbKind[];
}

export async function exportHostToSql(request: ExportRequest): Promise<ExportReport> {
  const { storage, dialect, host } = request;
  const { sources, skipped } = sqliteSources(request.groups, storage);
  for (const { group, kinds } of sources) {
    for (const kind of kinds) {
      const pending = await pendingMigrations(storage.db(kind), group.owner, group.migrations);
      if (pending.length) {
        throw failed(`the ${kind} store is not at the current schema (${group.owner}: ${pending.map((m) => m.id).join(', ')} not applied): run update_sql first`);
      }
    }
  }
  const tablesPerSource = await tablesOfGroups(sources.map((s) => s.group));
  const allTables = new Map<string, TableInfo>(tablesPerSource.flat().map((t) => [t.name, t]));

  // The work: every (store, table) with its row count, for the progress total.
  const jobs: Array<{ knex: Knex; table: TableInfo; count: number }> = [];
  for (const [index, { kinds }] of sources.entries()) {
    for (const table of tablesPerSource[index]!) {
      for (const kind of kinds) {
        const knex = storage.db(kind);
        const [row] = (await whereHost(knex(table.name), table, allTables, host).count({ n: '*' })) as Array<{ n: number | string }>;
        jobs.push({ knex, table, count: Number(row?.n ?? 0) });
      }
    }
  }
  const total = jobs.reduce((sum, j) => sum + j.count, 0);
  request.progress(0, total, 'rows');

  const out = await OutputFile.create('file', request.file, request.dataDir);
  const offline = knexFactory({ client: dialect.client, useNullAsDefault: true });
  const rows: Record<string, number> = {};
  try {
    await out.write(header(request, sources, skipped));
    const owners: Array<{ owner: string; migrations: readonly Migration[] }> = sources.map(({ group }) => ({ owner: group.owner, migrations: group.migrations }));
    await out.write(`${withoutEmptyStatements(renderSchema(dialect.client, owners))}\n`);
    let done = 0;
    for (const job of jobs) {
      if (!job.count) continue;
      await out.write(`-- ${job.table.name} (${hostScope(job.table, allTables) === 'shared' ? 'shared by all hosts' : `of ${host}`})\n`);
      const written = await copyTable(job.knex, job.table, allTables, host, offline, async (sql, n) => {
        await out.write(sql);
        done += n;
        request.progress(done, total, job.table.name);
      });
      rows[job.table.name] = (rows[job.table.name] ?? 0) + written;
      if (dialect.client === 'pg' && job.table.serial) await out.write(`${resetSequence(offline, job.table.name, job.table.serial)}\n`);
    }
    await out.write(dialect.client === 'pg' ? '\ncommit;\n' : '');
    await out.commit();
  } catch (err) {
    await out.discard();
    throw err;
  } finally {
    void offline.destroy();
  }
  return { file: out.target, rows, skipped: skipped.map((g) => `${g.owner} (${g.label})`) };
}

function sqliteSources(groups: readonly MigrationGroup[], storage: Storage): { sources: Source[]; skipped: MigrationGroup[] } {
  const sources: Source[] = [];
  const skipped: MigrationGroup[] = [];
  for (const group of groups) {
    const isSqlite = group.kind === 'mnesia' || storage.sqlType === 'sqlite';
    if (!isSqlite) {
      skipped.push(group);
      continue;
    }
    const same = sources.find((s) => s.group.owner === group.owner && s.group.label === group.label);
    if (same) {
      if (!same.kinds.includes(group.kind)) same.kinds.push(group.kind);
    } else {
      sources.push({ group, kinds: [group.kind] });
    }
  }
  return { sources, skipped };
}

/** Pages through the table's rows of `host` by rowid, writing INSERT statements; returns the rows written. */
async function copyTable(
  knex: Knex,
  table: TableInfo,
  tables: ReadonlyMap<string, TableInfo>,
  host: string,
  offline: Knex,
  write: (sql: string, rows: number) => Promise<void>,
): Promise<number> {
  const booleans = new Set(table.columns.filter((c) => c.type === 'boolean').map((c) => c.name));
  const columns = table.columns.map((c) => `${table.name}.${c.name}`);
  let after = Number.MIN_SAFE_INTEGER;
  let written = 0;
  for (;;) {
    const page: Array<Record<string, unknown>> = await whereHost(
      knex(table.name).select(knex.raw('??.rowid as ??', [table.name, ROWID]), ...columns),
      table,
      tables,
      host,
    )
      .where(knex.raw('??.rowid', [table.name]), '>', after)
      .orderBy(knex.raw('??.rowid', [table.name]) as unknown as string)
      .limit(PAGE_ROWS);
    if (!page.length) return written;
    after = Number(page[page.length - 1]![ROWID]);
    let batch: Array<Record<string, unknown>> = [];
    let bytes = 0;
    const flush = async () => {
      if (!batch.length) return;
      await write(`${offline(table.name).insert(batch).toString()};\n`, batch.length);
      written += batch.length;
      batch = [];
      bytes = 0;
    };
    for (const source of page) {
      const row: Record<string, unknown> = {};
      for (const { name } of table.columns) {
        const value = source[name];
        row[name] = booleans.has(name) && value !== null && value !== undefined ? Boolean(value) : value;
        bytes += typeof value === 'string' ? value.length : 8;
      }
      batch.push(row);
      if (batch.length >= STATEMENT_ROWS || bytes >= STATEMENT_BYTES) await flush();
    }
    await flush();
    // Let the server serve its clients between pages.
    await new Promise((resolve) => setImmediate(resolve));
    if (page.length < PAGE_ROWS) return written;
  }
}

/** PostgreSQL's serial columns do not follow explicit ids: point the sequence past the largest one. */
function resetSequence(offline: Knex, table: string, column: string): string {
  return offline
    .raw("select setval(pg_get_serial_sequence(?, ?), coalesce((select max(??) from ??), 0) + 1, false);", [table, column, column, table])
    .toString();
}

function withoutEmptyStatements(sql: string): string {
  return sql
    .split('\n')
    .filter((line) => line.trim() !== ';')
    .join('\n');
}

function header(request: ExportRequest, sources: readonly Source[], skipped: readonly MigrationGroup[]): string {
  const load = request.dialect.client === 'pg' ? 'psql -v ON_ERROR_STOP=1 -d DATABASE -f FILE' : 'mysql DATABASE < FILE';
  const lines = [
    `-- export2sql of host ${request.host} for ${request.dialect.name === 'pgsql' ? 'PostgreSQL' : 'MariaDB/MySQL'}, written by service ${KERNEL_VERSION} on ${new Date().toISOString()}.`,
    `-- Load it into an EMPTY database: ${load}; then start the server there with sql_type: ${request.dialect.name}.`,
    `-- Tables of: ${sources.map((s) => `${s.group.owner} (${s.group.label}, from ${s.kinds.join(' and ')})`).join(', ') || 'none'}.`,
  ];
  if (skipped.length) lines.push(`-- Left out (already in the external SQL database): ${skipped.map((g) => `${g.owner} (${g.label})`).join(', ')}.`);
  lines.push('');
  lines.push(request.dialect.client === 'pg' ? 'begin;' : 'set names utf8mb4;');
  return `${lines.join('\n')}\n\n`;
}
