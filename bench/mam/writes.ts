/**
 * What the archive's group commit (modules/mod_mam/src/batch-writer.ts) buys, measured on the store alone:
 * rows per second written through ArchiveStore.add, and how long one statement holds the event loop.
 *
 *   node --import tsx bench/mam/writes.ts [--db sqlite,mysql,pgsql] [--rows 20000] [--concurrency 1,16,128]
 *
 * For each database (fresh, as bench/mam/run.ts makes them) and each concurrency c: c callers each add rows
 * one after another (awaiting each, as a stream's archiving layer does), so c rows at most are queued at
 * once and a statement carries up to c rows. c = 1 is one statement per row, the write path before the
 * group commit. Reports rows/s, the mean rows per INSERT statement, and how long a statement takes from
 * knex's `query` event to its `query-response` (median and p99): on SQLite that is time the statement runs
 * synchronously inside the event loop (better-sqlite3 has no thread of its own), on MariaDB and
 * PostgreSQL a round trip during which the loop is free.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { x } from '@service/plugin-api';
import { createLogger } from '../../kernel/dist/log/logger.js';
import { Storage, type SqlSettings } from '../../kernel/dist/storage/database.js';
import { MAM_MIGRATIONS } from '../../modules/mod_mam/dist/migrations.js';
import { ArchiveStore } from '../../modules/mod_mam/dist/store.js';
import { machineInfo, requireBuild } from '../api/lib.js';
import { scratchDatabase } from './database.js';

const { values: opts } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    rows: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '1,16,128' },
  },
});

type DbType = SqlSettings['type'];
requireBuild();
const logger = createLogger({ level: 'warning' });

const total = Number(opts.rows);
console.log(JSON.stringify(machineInfo()));
for (const type of opts.db.split(',') as DbType[]) {
  const dir = await mkdtemp(join(tmpdir(), 'bench-mamw-'));
  const { settings, drop } = await scratchDatabase(type, dir, 'mam.db');
  const storage = await Storage.open({ sql: settings, dataDir: dir, defaultDb: 'sql' }, logger as never);
  try {
    await storage.migrate('mod_mam', MAM_MIGRATIONS, 'sql');
    const knex = storage.db('sql');
    const store = new ArchiveStore(knex as never);
    let statements = 0;
    const startedAt = new Map<string, bigint>();
    let durations: number[] = [];
    knex.on('query', (q: { sql: string; __knexQueryUid: string }) => {
      if (!q.sql.startsWith('insert into mam_messages')) return;
      statements++;
      startedAt.set(q.__knexQueryUid, process.hrtime.bigint());
    });
    knex.on('query-response', (_r: unknown, q: { __knexQueryUid: string }) => {
      const t0 = startedAt.get(q.__knexQueryUid);
      if (t0 === undefined) return;
      startedAt.delete(q.__knexQueryUid);
      durations.push(Number(process.hrtime.bigint() - t0) / 1e6);
    });
    for (const c of opts.concurrency.split(',').map(Number)) {
      statements = 0;
      durations = [];
      const started = process.hrtime.bigint();
      let next = 0;
      await Promise.all(
        Array.from({ length: c }, async (_, w) => {
          while (next < total) {
            const n = next++;
            const body = `message ${n} of a write benchmark, a line of ordinary length`;
            await store.add({ user: `u${w % 50}`, host: 'localhost' }, { peer: `p${n % 20}@localhost`, peerFull: `p${n % 20}@localhost/r`, direction: 'in', stanza: x('message', { type: 'chat', id: `m${n}` }, x('body', {}, body)), body });
          }
        }),
      );
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      durations.sort((a, b) => a - b);
      const q = (p: number) => durations[Math.min(durations.length - 1, Math.ceil(p * durations.length) - 1)]!.toFixed(2);
      console.log(
        `${type} concurrency ${String(c).padStart(4)}: ${Math.round(total / seconds).toLocaleString('en-US').padStart(8)} rows/s, ${(total / statements).toFixed(1).padStart(6)} rows per INSERT, ` +
          `statement median ${q(0.5)} ms, p99 ${q(0.99)} ms`,
      );
    }
  } finally {
    await storage.close();
    await drop();
    await rm(dir, { recursive: true, force: true });
  }
}
