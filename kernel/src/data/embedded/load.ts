/**
 * `load`: an immediate restore from a text dump (dump-format.ts). The file is read twice, streamed: first
 * checked whole (header, each table known to the running store with the dumped columns, each row the right
 * length with valid values, the end line and its counts) with nothing touched; then, in one held
 * transaction per store (replace.ts), each dumped table is emptied and refilled, in chunks with the event
 * loop served between them. All or nothing. Tables the dump does not have are left as they are, and
 * schema_migrations keeps this server's rows (the schema is the running one).
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { failed } from '@service/plugin-api';
import type { KernelServices } from '../../modules/services.js';
import { MIGRATIONS_TABLE } from '../../storage/migrations.js';
import { decodeValue, DUMP_FORMAT, DUMP_VERSION } from './dump-format.js';
import { inputFile } from './paths.js';
import { afterReplace, replaceInTransactions } from './replace.js';
import type { Progress } from './snapshot.js';
import { emptyTable, fresh, holdingConnection, knexOf, liveStores, quoteIdent, tablesOf, yieldTurn, type Connection, type StoreName } from './stores.js';

const ROWS_PER_TURN = 2000;
/** Rows per INSERT statement (well under SQLite's 32 766 bound parameters for any table of this server). */
const ROWS_PER_INSERT = 100;

interface Section {
  store: StoreName;
  table: string;
  columns: string[];
  rows: number;
}

type Line = { kind: 'table'; section: Section } | { kind: 'row'; values: unknown[] };

async function* lines(file: string): AsyncGenerator<{ n: number; text: string }> {
  const input = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let n = 0;
  for await (const text of input) yield { n: ++n, text };
}

/** Pass 1: checks the whole file against the live schema; returns its sections (no rows kept). */
async function check(services: KernelServices, file: string): Promise<{ sections: Section[]; rows: number }> {
  const bad = (n: number, why: string) => failed(`${file} line ${n}: ${why}; nothing was changed`);
  const live = liveStores(services);
  const schema = new Map<StoreName, Map<string, Set<string>>>();
  for (const store of live.stores) {
    schema.set(
      store.name,
      await holdingConnection(knexOf(services, store.name), async (db) => {
        const tables = new Map<string, Set<string>>();
        for (const t of tablesOf(db)) tables.set(t, new Set((fresh(db, `PRAGMA table_info(${quoteIdent(t)})`).all() as Array<{ name: string }>).map((c) => c.name)));
        return tables;
      }),
    );
  }
  const sections: Section[] = [];
  let current: Section | undefined;
  let inSection = 0;
  let total = 0;
  let ended = false;
  let header = false;
  for await (const { n, text } of lines(file)) {
    if (n % ROWS_PER_TURN === 0) await yieldTurn();
    if (ended) {
      if (text.trim()) throw bad(n, 'text after the end line');
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw bad(n, n === 1 ? 'not a text dump made by the dump command (the first line is not JSON)' : 'not a JSON value');
    }
    if (!header) {
      const h = value as { format?: unknown; version?: unknown };
      if (h?.format !== DUMP_FORMAT) throw bad(n, `not a text dump made by the dump command (no "format":"${DUMP_FORMAT}")`);
      if (typeof h.version !== 'number' || h.version > DUMP_VERSION) throw bad(n, `dump format version ${String(h.version)} is newer than this server reads (${DUMP_VERSION})`);
      header = true;
      continue;
    }
    if (Array.isArray(value)) {
      if (!current) throw bad(n, 'a row before any table line');
      if (value.length !== current.columns.length) throw bad(n, `a row of ${value.length} values where table ${current.table} has ${current.columns.length} columns`);
      for (const v of value) {
        try {
          decodeValue(v);
        } catch (err) {
          throw bad(n, (err as Error).message);
        }
      }
      inSection++;
      total++;
      continue;
    }
    const o = value as Record<string, unknown>;
    if (current && inSection !== current.rows) throw bad(n, `table ${current.table} announced ${current.rows} rows but has ${inSection} (the file was edited or truncated)`);
    if (o?.end === true) {
      if (o.rows !== total) throw bad(n, `the end line counts ${String(o.rows)} rows but the file has ${total}`);
      ended = true;
      current = undefined;
      continue;
    }
    if (typeof o?.table !== 'string' || !Array.isArray(o.columns) || !o.columns.every((c) => typeof c === 'string') || !Number.isSafeInteger(o.rows)) {
      throw bad(n, 'expected a table line {"store":…,"table":…,"columns":[…],"rows":…}, a row array or the end line');
    }
    const store = o.store as StoreName;
    const tables = schema.get(store);
    if (!tables) throw bad(n, `store ${JSON.stringify(o.store)} is not a SQLite database of this server (${live.stores.map((s) => s.name).join(', ')}${live.excluded ? `; ${live.excluded}` : ''})`);
    const columns = tables.get(o.table);
    if (!columns) throw bad(n, `unknown table '${o.table}' in the ${store} store (enable the module that owns it first)`);
    const missing = (o.columns as string[]).filter((c) => !columns.has(c));
    if (missing.length) throw bad(n, `table ${o.table} has no column ${missing.join(', ')} here`);
    if (sections.some((s) => s.store === store && s.table === o.table)) throw bad(n, `table ${o.table} appears twice`);
    current = { store, table: o.table, columns: o.columns as string[], rows: o.rows as number };
    sections.push(current);
    inSection = 0;
  }
  if (!header) throw failed(`${file} is empty; nothing was changed`);
  if (!ended) throw failed(`${file} has no end line: it is truncated; nothing was changed`);
  return { sections, rows: total };
}

export async function load(services: KernelServices, fileArg: string, progress: Progress): Promise<string> {
  const config = services.config();
  const file = await inputFile('file', fileArg, config);
  const { sections, rows } = await check(services, file);
  const stores = [...new Set(sections.filter((s) => s.table !== MIGRATIONS_TABLE).map((s) => s.store))];
  let done = 0;
  progress(0, rows, 'rows loaded');
  // Pass 2: one transaction per store; the file is read once more, each row inserted into its store's connection.
  const connections = new Map<StoreName, Connection>();
  await replaceInTransactions(
    services,
    stores,
    async (db, store) => {
      connections.set(store, db);
      // The transactions of every store are open once the last one is: the rows are written then.
      if (connections.size < stores.length) return;
      const dbOf = (s: StoreName) => connections.get(s) ?? [...connections.values()][0]!;
      // Rows go in by statements of ROWS_PER_INSERT (one prepared statement per table and batch size).
      let section: { db: Connection; table: string; columns: string[]; statements: Map<number, ReturnType<typeof fresh>>; batch: unknown[] } | undefined;
      const flush = () => {
        if (!section || section.batch.length === 0) return;
        const n = section.batch.length / section.columns.length;
        let statement = section.statements.get(n);
        if (!statement) {
          const row = `(${section.columns.map(() => '?').join(', ')})`;
          statement = fresh(section.db, `INSERT INTO ${quoteIdent(section.table)} (${section.columns.map(quoteIdent).join(', ')}) VALUES ${Array.from({ length: n }, () => row).join(', ')}`);
          section.statements.set(n, statement);
        }
        statement.run(section.batch);
        section.batch = [];
      };
      let inTurn = 0;
      let header = false;
      for await (const { text } of lines(file)) {
        if (!header) {
          header = true;
          continue;
        }
        const value = JSON.parse(text) as unknown;
        if (Array.isArray(value)) {
          if (!section) continue;
          for (const v of value) section.batch.push(decodeValue(v));
          done++;
          if (section.batch.length >= ROWS_PER_INSERT * section.columns.length) flush();
          if (++inTurn === ROWS_PER_TURN) {
            inTurn = 0;
            progress(done, rows, 'rows loaded');
            await yieldTurn();
          }
          continue;
        }
        flush();
        const o = value as { store?: StoreName; table?: string; columns?: string[]; end?: boolean };
        if (o.end) break;
        if (o.table === MIGRATIONS_TABLE) {
          section = undefined;
          continue;
        }
        const target = dbOf(o.store!);
        await emptyTable(target, o.table!);
        section = { db: target, table: o.table!, columns: o.columns!, statements: new Map(), batch: [] };
      }
      flush();
    },
  );
  progress(rows, rows, 'rows loaded');
  const { kicked } = await afterReplace(services, 'loading a text dump');
  services.logger.notice({ file, tables: sections.length, rows: done, kicked }, 'text dump loaded from %s', file);
  return `Loaded ${sections.length} tables (${done} rows) from ${file}${kicked ? `; ${kicked} session(s) of accounts the dump does not have were closed` : ''}`;
}
