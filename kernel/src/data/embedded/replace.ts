/**
 * Replaces the content of live stores, all or nothing, without closing them: each store's one connection
 * is held (every other query of the server on it waits), foreign keys are switched off, one IMMEDIATE
 * transaction per store is opened, the caller's steps fill it (awaiting between chunks: the event loop keeps
 * serving), the foreign keys are checked, and only then are the transactions committed. Any failure before
 * that rolls every one back: the data stays as it was. The write-ahead log the commit leaves is copied into
 * the database file by a worker thread (checkpoint-worker.ts), not inside the commit on the event loop. Then the caches are dropped, the migrations of this
 * release run (a backup from an older release is brought up to date) and sessions whose account no longer
 * exists are closed with a stream error; the others go on.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { failed } from '@service/plugin-api';
import type { Knex } from 'knex';
import { ACCOUNT_MIGRATIONS } from '../../accounts/migrations.js';
import type { KernelServices } from '../../modules/services.js';
import { NODE_MIGRATIONS } from '../../node/identity.js';
import { OAUTH_MIGRATIONS } from '../../oauth/migrations.js';
import { StreamError } from '@service/plugin-api';
import { desiredModules } from '../../modules/desired.js';
import { holdingConnection, knexOf, liveStores, type Connection, type StoreName } from './stores.js';

export type StoreWork = (db: Connection, store: StoreName) => Promise<void>;

export interface ReplaceHooks {
  /** Runs on each held connection before its transaction begins (ATTACH must run outside one). */
  before?(db: Connection, store: StoreName): void;
  /** Runs on each held connection after its transaction ended, committed or not, before it is released. */
  after?(db: Connection, store: StoreName): void;
  /**
   * Keep foreign keys enforced (delete_mnesia: a cascade a schema declares must happen). By default they are
   * off while whole tables are replaced, and checked once before the commit.
   */
  foreignKeys?: boolean;
}

/** Holds the connections of `stores`, runs `work` on each in a transaction, commits all or rolls all back. */
export async function replaceInTransactions(services: KernelServices, stores: StoreName[], work: StoreWork, hooks: ReplaceHooks = {}): Promise<void> {
  const knexes: Array<[StoreName, Knex]> = [];
  for (const store of stores) {
    const knex = knexOf(services, store);
    if (!knexes.some(([, k]) => k === knex)) knexes.push([store, knex]);
  }
  const held: Array<{ store: StoreName; knex: Knex; db: Connection; open: boolean; autocheckpoint?: number; committed?: boolean }> = [];
  const client = (knex: Knex) => knex.client as { acquireConnection(): Promise<Connection>; releaseConnection(c: Connection): Promise<unknown> };
  try {
    for (const [store, knex] of knexes) held.push({ store, knex, db: await client(knex).acquireConnection(), open: false });
    for (const h of held) {
      if (!hooks.foreignKeys) h.db.pragma('foreign_keys = OFF');
      hooks.before?.(h.db, h.store);
      h.db.exec('BEGIN IMMEDIATE');
      h.open = true;
    }
    for (const h of held) await work(h.db, h.store);
    for (const h of held) {
      const violations = h.db.pragma('foreign_key_check') as unknown[];
      if (violations.length) throw failed(`the new ${h.store} data breaks ${violations.length} foreign key reference(s); nothing was changed`);
    }
    for (const h of held) {
      // No automatic checkpoint inside the commit: it would write the whole new database at once (see below).
      h.autocheckpoint = Number(h.db.pragma('wal_autocheckpoint', { simple: true }));
      h.db.pragma('wal_autocheckpoint = 0');
      const started = performance.now();
      h.db.exec('COMMIT');
      h.open = false;
      h.committed = true;
      services.logger.info({ store: h.store, ms: Math.round(performance.now() - started) }, 'replaced the %s data: committed', h.store);
    }
  } catch (err) {
    if ((err as { kind?: unknown }).kind) throw err;
    const committed = held.filter((h) => h.committed).map((h) => h.store);
    // Only a failing commit of a later store can leave an earlier one committed (an I/O error, disk full).
    throw failed(
      `replacing the data failed: ${(err as Error).message}; ${committed.length ? `the ${committed.join(', ')} data was replaced, the rest was not` : 'nothing was changed'}`,
    );
  } finally {
    for (const h of held) {
      if (h.open) {
        try {
          h.db.exec('ROLLBACK');
        } catch {
          // Already rolled back by SQLite itself.
        }
      }
      try {
        hooks.after?.(h.db, h.store);
        h.db.pragma('foreign_keys = ON');
        if (h.autocheckpoint !== undefined && !h.committed) h.db.pragma(`wal_autocheckpoint = ${h.autocheckpoint}`);
      } finally {
        await client(h.knex).releaseConnection(h.db);
      }
    }
  }
  // The new data is in the write-ahead log: a worker thread copies it into the database file, then the
  // automatic checkpoint is switched back on.
  for (const h of held.filter((x) => x.committed)) {
    const file = liveStores(services, true).stores.find((s) => s.name === h.store)?.file;
    try {
      if (file) await checkpointAside(file);
    } catch (err) {
      services.logger.warn({ store: h.store, err: (err as Error).message }, 'checkpoint of the %s database after replacing its data failed: SQLite does it later', h.store);
    } finally {
      await holdingConnection(h.knex, async (db) => db.pragma(`wal_autocheckpoint = ${h.autocheckpoint}`));
    }
  }
}

async function checkpointAside(file: string): Promise<void> {
  const worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), { workerData: { file } });
  try {
    const [answer] = (await once(worker, 'message')) as [{ result: unknown } | { error: string }];
    if ('error' in answer) throw new Error(answer.error);
  } finally {
    await worker.terminate();
  }
}

/**
 * After data was replaced: this release's migrations, then, in this process and in every other worker,
 * what was read of the old data is dropped and sessions of accounts that are gone are closed.
 */
export async function afterReplace(services: KernelServices, why: string): Promise<{ kicked: number }> {
  const config = services.config();
  const { storage } = services;
  await storage.migrate('kernel', ACCOUNT_MIGRATIONS, config.auth_method.includes('sql') ? 'sql' : 'mnesia');
  await storage.migrate('kernel', NODE_MIGRATIONS, config.default_db);
  await storage.migrate('service_oauth', OAUTH_MIGRATIONS, config.oauth_db_type ?? config.default_db);
  for (const wanted of desiredModules(config).values()) {
    const definition = await services.catalog.definition(wanted.module).catch(() => undefined);
    if (!definition?.migrations?.length) continue;
    const kind = (wanted.options.db_type as StoreName | undefined) ?? config.default_db;
    await storage.migrate(wanted.module, definition.migrations, kind);
  }
  services.workers.everyWorker({ op: 'data-replaced', why });
  return dropStaleState(services, why);
}

/** In this process: the clear_cache hook, and this process's sessions of accounts that no longer exist closed. */
export async function dropStaleState(services: KernelServices, why: string): Promise<{ kicked: number }> {
  await services.hooks.run('clear_cache');
  let kicked = 0;
  for (const bare of [...services.xmpp.localSessions.accounts()]) {
    const at = bare.lastIndexOf('@');
    if (!(await services.accounts.exists(bare.slice(0, at), bare.slice(at + 1)))) {
      kicked += await services.xmpp.kickAccount(bare, new StreamError('not-authorized', `the account no longer exists after ${why}`));
    }
  }
  return { kicked };
}
