/**
 * Checks a backup before anything is changed: the container (magic, manifest, length, digests, see
 * container.ts), each image's `PRAGMA integrity_check`, and its schema_migrations against what this server
 * knows (a backup made by a newer release, with migrations this one lacks, is refused), and that each
 * image has somewhere to go (an `sql` image needs sql_type sqlite).
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { failed } from '@service/plugin-api';
import { ACCOUNT_MIGRATIONS } from '../../accounts/migrations.js';
import type { KernelServices } from '../../modules/services.js';
import { NODE_MIGRATIONS } from '../../node/identity.js';
import { OAUTH_MIGRATIONS } from '../../oauth/migrations.js';
import { MIGRATIONS_TABLE } from '../../storage/migrations.js';
import { extractContainer, type Manifest, type PartImage } from './container.js';
import { liveStores, quoteIdent, tablesOf } from './stores.js';

export interface VerifiedBackup {
  readonly manifest: Manifest;
  readonly images: PartImage[];
  /** Rows in all images (the restore's progress total). */
  readonly rows: number;
}

/** Migration ids this server knows, by owner: the kernel's, OAuth's and every available module's. */
export async function knownMigrations(services: KernelServices): Promise<Map<string, Set<string>>> {
  const known = new Map<string, Set<string>>([
    ['kernel', new Set([...ACCOUNT_MIGRATIONS, ...NODE_MIGRATIONS].map((m) => m.id))],
    ['service_oauth', new Set(OAUTH_MIGRATIONS.map((m) => m.id))],
  ]);
  for (const name of await services.catalog.available()) {
    try {
      known.set(name, new Set(((await services.catalog.definition(name)).migrations ?? []).map((m) => m.id)));
    } catch {
      // A module that cannot load here says nothing about the backup.
    }
  }
  return known;
}

/**
 * Checks one extracted image in a worker thread (image-check-worker.ts): `PRAGMA integrity_check` reads the
 * whole file in one call, which must not hold the event loop. Returns its row count; throws the check's error.
 */
export async function checkImageAside(file: string, source: string, store: string, known?: Map<string, Set<string>>): Promise<number> {
  const worker = new Worker(new URL('./image-check-worker.js', import.meta.url), {
    workerData: { file, source, store, known: known ? [...known].map(([owner, ids]) => [owner, [...ids]]) : undefined },
  });
  try {
    const [answer] = (await once(worker, 'message')) as [{ rows: number } | { error: string }];
    if ('error' in answer) throw failed(answer.error);
    return answer.rows;
  } finally {
    await worker.terminate();
  }
}

/** Checks one extracted image; returns its row count. */
export function checkImage(file: string, source: string, store: string, known?: Map<string, Set<string>>): number {
  let db: Database.Database;
  try {
    db = new Database(file, { fileMustExist: true });
  } catch (err) {
    throw failed(`${source} is not a usable backup: its ${store} image does not open (${(err as Error).message}); nothing was changed`);
  }
  try {
    let verdict: string;
    try {
      verdict = (db.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check).join('; ');
    } catch (err) {
      throw failed(`${source} is not a usable backup: its ${store} image is not a SQLite database (${(err as Error).message}); nothing was changed`);
    }
    if (verdict !== 'ok') throw failed(`${source} is not a usable backup: the integrity check of its ${store} image failed (${verdict.slice(0, 300)}); nothing was changed`);
    const tables = tablesOf(db);
    if (known && tables.includes(MIGRATIONS_TABLE)) {
      const applied = db.prepare(`SELECT owner, id FROM ${quoteIdent(MIGRATIONS_TABLE)}`).all() as Array<{ owner: string; id: string }>;
      const unknown = applied.filter((m) => known.get(m.owner) && !known.get(m.owner)!.has(m.id));
      if (unknown.length) {
        throw failed(
          `${source} was made by a newer release: its ${store} database has migrations this server does not know (${unknown.slice(0, 5).map((m) => `${m.owner}/${m.id}`).join(', ')}); nothing was changed`,
        );
      }
    }
    let rows = 0;
    for (const t of tables) rows += Number((db.prepare(`SELECT count(*) AS n FROM ${quoteIdent(t)}`).get() as { n: number }).n);
    return rows;
  } finally {
    db.close();
  }
}

/** Extracts `file` into `dir` and checks it completely; throws a clear error (having changed nothing) otherwise. */
export async function verifyBackup(services: KernelServices, file: string, dir: string, options: { migrations?: boolean } = {}): Promise<VerifiedBackup> {
  const { manifest, images } = await extractContainer(file, dir);
  const live = liveStores(services, true);
  for (const image of images) {
    if (!live.stores.some((s) => s.name === image.store)) {
      throw failed(`${file} holds a SQLite SQL database, but this server's sql_type is ${services.config().sql.type}: ${live.excluded ?? 'nothing to restore it into'}; nothing was changed`);
    }
  }
  const known = options.migrations === false ? undefined : await knownMigrations(services);
  let rows = 0;
  for (const image of images) rows += await checkImageAside(image.file, file, image.store, known);
  return { manifest, images, rows };
}
