/**
 * A consistent online copy of the live stores, made with SQLite's backup API on the server's own connection
 * while clients keep writing: the copy runs in steps between the server's queries (the event loop is never
 * held), and SQLite carries every write made on that connection meanwhile into the copy, so the image is
 * the database as it stood when the last step ran. Backup and the dumps start from such a snapshot.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { failed } from '@service/plugin-api';
import type { KernelServices } from '../../modules/services.js';
import { knexOf, liveStores, quoteIdent, sharedConnection, tablesOf, yieldTurn, type EmbeddedStore, type StoreName } from './stores.js';

/** Pages copied per step: 4 MiB at SQLite's default page size, a few milliseconds of work. */
const PAGES_PER_STEP = 1024;

export interface Snapshot {
  readonly store: StoreName;
  readonly file: string;
  readonly tables: number;
  readonly rows: number;
}

export type Progress = (done: number, total: number | undefined, label: string) => void;

/** A private work directory under data_dir (same file system as the databases); `work` runs, then it goes. */
export async function inWorkDir<T>(dataDir: string, work: (dir: string) => Promise<T>): Promise<T> {
  let dir: string;
  try {
    dir = await mkdtemp(join(dataDir, '.embedded-work-'));
  } catch (err) {
    throw failed(`cannot make a work directory in ${dataDir}: ${(err as Error).message}`);
  }
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Copies each store into `dir/<store>.db` (a self-contained rollback-journal file). */
export async function snapshotStores(services: KernelServices, dir: string, progress: Progress, only?: StoreName): Promise<Snapshot[]> {
  const out: Snapshot[] = [];
  for (const store of liveStores(services).stores) {
    if (only && store.name !== only) continue;
    out.push(await snapshotStore(services, store, join(dir, `${store.name}.db`), progress));
  }
  return out;
}

async function snapshotStore(services: KernelServices, store: EmbeddedStore, target: string, progress: Progress): Promise<Snapshot> {
  const db = await sharedConnection(knexOf(services, store.name));
  const label = `pages of the ${store.name} database copied`;
  try {
    await db.backup(target, {
      progress: ({ totalPages, remainingPages }) => {
        progress(totalPages - remainingPages, totalPages, label);
        return PAGES_PER_STEP;
      },
    });
  } catch (err) {
    throw failed(`cannot copy the ${store.name} database (${store.file}): ${(err as Error).message}`);
  }
  await yieldTurn();
  const image = new Database(target);
  try {
    image.pragma('journal_mode = DELETE');
    let rows = 0;
    const tables = tablesOf(image);
    for (const t of tables) rows += Number((image.prepare(`SELECT count(*) AS n FROM ${quoteIdent(t)}`).get() as { n: number }).n);
    return { store: store.name, file: target, tables: tables.length, rows };
  } finally {
    image.close();
  }
}
