/**
 * `dump` and `dump_table`: the text dump (dump-format.ts) of every table of the covered stores, or of one,
 * taken from an online snapshot (snapshot.ts), so it is consistent while clients write. Rows are streamed
 * out in chunks with the event loop served between them, never the whole database in memory; the file is
 * written 0600 under a temporary name and renamed into place.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import Database from 'better-sqlite3';
import { failed } from '@service/plugin-api';
import type { KernelServices } from '../../modules/services.js';
import { KERNEL_VERSION } from '../../version.js';
import { DUMP_FORMAT, DUMP_VERSION, encodeValue } from './dump-format.js';
import { fsReason } from '../fs-reason.js';
import { commitFile, outputFile, temporaryNextTo } from './paths.js';
import { inWorkDir, snapshotStores, type Progress } from './snapshot.js';
import { liveStores, quoteIdent, resolveTable, tablesOf, yieldTurn, type TableRef } from './stores.js';

const ROWS_PER_TURN = 2000;

function write(out: WriteStream, line: string): Promise<void> {
  return out.write(line + '\n') ? Promise.resolve() : new Promise((done) => out.once('drain', done));
}

export async function dump(services: KernelServices, fileArg: string, tableArg: string | undefined, progress: Progress): Promise<string> {
  const config = services.config();
  const target = await outputFile('file', fileArg, config);
  const only: TableRef | undefined = tableArg === undefined ? undefined : await resolveTable(services, 'table', tableArg);
  const { stores, excluded } = liveStores(services);
  if (!stores.length) throw failed(`there is no SQLite database to dump: ${excluded ?? 'the embedded store is empty'}`);
  const counts = await inWorkDir(config.dataDir, async (dir) => {
    const snapshots = await snapshotStores(services, dir, progress, only?.store);
    const temporary = temporaryNextTo(target);
    const out = createWriteStream(temporary, { mode: 0o600, flags: 'wx' });
    const failure = new Promise<never>((_, fail) => out.on('error', fail));
    failure.catch(() => undefined);
    try {
      const total = only ? undefined : snapshots.reduce((n, s) => n + s.rows, 0);
      let rows = 0;
      let tables = 0;
      await Promise.race([write(out, JSON.stringify({ format: DUMP_FORMAT, version: DUMP_VERSION, created: new Date().toISOString(), server: KERNEL_VERSION, node: config.node_name })), failure]);
      for (const snap of snapshots) {
        const db = new Database(snap.file, { readonly: true });
        try {
          for (const table of tablesOf(db)) {
            if (only && table !== only.table) continue;
            const columns = (db.pragma(`table_info(${quoteIdent(table)})`) as Array<{ name: string }>).map((c) => c.name);
            const n = Number((db.prepare(`SELECT count(*) AS n FROM ${quoteIdent(table)}`).get() as { n: number }).n);
            await Promise.race([write(out, JSON.stringify({ store: snap.store, table, columns, rows: n })), failure]);
            const select = db.prepare(`SELECT ${columns.map(quoteIdent).join(', ')} FROM ${quoteIdent(table)}`).raw(true).safeIntegers(true);
            let chunk: string[] = [];
            for (const row of select.iterate() as IterableIterator<unknown[]>) {
              chunk.push(JSON.stringify(row.map(encodeValue)));
              rows++;
              if (chunk.length === ROWS_PER_TURN) {
                await Promise.race([write(out, chunk.join('\n')), failure]);
                chunk = [];
                progress(rows, total ?? n, 'rows dumped');
                await yieldTurn();
              }
            }
            if (chunk.length) await Promise.race([write(out, chunk.join('\n')), failure]);
            tables++;
          }
        } finally {
          db.close();
        }
      }
      await Promise.race([write(out, JSON.stringify({ end: true, tables, rows })), failure]);
      progress(rows, total ?? rows, 'rows dumped');
      await Promise.race([new Promise<void>((done) => out.end(done)), failure]);
      await commitFile(temporary, target);
      return { rows, tables };
    } catch (err) {
      out.destroy();
      await unlink(temporary).catch(() => undefined);
      if ((err as { kind?: string }).kind) throw err;
      throw failed(`cannot write ${target}: ${fsReason(err, true)}`);
    }
  });
  services.logger.notice({ file: target, ...counts, table: only?.display }, 'text dump written to %s', target);
  const what = only ? `table ${only.display}` : `${counts.tables} tables`;
  return `Dumped ${what} (${counts.rows} rows) to ${target}${!only && excluded ? `; ${excluded}` : ''}`;
}
