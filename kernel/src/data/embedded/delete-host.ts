/**
 * `delete_mnesia`: removes one virtual host's content from the covered stores — every row whose `host` (or
 * `server_host`) column names it; rows whose `service` column is the host, a subdomain of it or one of its
 * accounts (MUC rooms, pubsub and PEP nodes); and pubsub items, affiliations and subscriptions of those
 * nodes. One held transaction per store, committed together (replace.ts), deleting in chunks with the event
 * loop served between them. The host must be a
 * configured one or one the data still names. Then the caches are dropped and the host's sessions closed.
 */
import { notFound } from '@service/plugin-api';
import type { KernelServices } from '../../modules/services.js';
import { hostRowsOf } from '../host-rows.js';
import { afterReplace, replaceInTransactions } from './replace.js';
import type { Progress } from './snapshot.js';
import { fresh, holdingConnection, knexOf, liveStores, quoteIdent, tablesOf, yieldTurn, type Connection, type StoreName } from './stores.js';

const ROWS_PER_CHUNK = 5000;

interface HostRows {
  table: string;
  /** An SQL condition on the table's rows, with `?` for the host. */
  where: string;
  params: readonly string[];
}

/** The host's rows in each table (../host-rows.ts), children first (their condition reads the parent rows still there). */
function hostRows(db: Connection, host: string): HostRows[] {
  const columnsOf = new Map(tablesOf(db).map((t) => [t, (fresh(db, `PRAGMA table_info(${quoteIdent(t)})`).all() as Array<{ name: string }>).map((c) => c.name)]));
  const children: HostRows[] = [];
  const owners: HostRows[] = [];
  for (const table of columnsOf.keys()) {
    const rows = hostRowsOf(table, (name) => columnsOf.get(name), host);
    if (rows.where === undefined) continue;
    (rows.scope === 'parent' ? children : owners).push({ table, where: rows.where, params: rows.params });
  }
  return [...children, ...owners];
}

export async function deleteHost(services: KernelServices, hostArg: string, progress: Progress): Promise<void> {
  const stores = liveStores(services).stores.map((s) => s.name);
  const configured = services.config().hosts.find((h) => h.toLowerCase() === hostArg.toLowerCase());
  const host = configured ?? hostArg.toLowerCase();
  let total = 0;
  const plan = new Map<StoreName, HostRows[]>();
  for (const store of stores) {
    await holdingConnection(knexOf(services, store), async (db) => {
      const rows = hostRows(db, host);
      plan.set(store, rows);
      for (const { table, where, params } of rows) total += Number((fresh(db, `SELECT count(*) AS n FROM ${quoteIdent(table)} WHERE ${where}`).get(...params) as { n: number }).n);
    });
  }
  if (!configured && total === 0) throw notFound(`unknown host '${hostArg}': it is not a virtual host of this server and no stored data names it`);
  let done = 0;
  progress(0, total, 'rows deleted');
  await replaceInTransactions(services, stores, async (db, store) => {
    for (const { table, where, params } of plan.get(store) ?? []) {
      let chunk;
      try {
        chunk = fresh(db, `DELETE FROM ${quoteIdent(table)} WHERE rowid IN (SELECT rowid FROM ${quoteIdent(table)} WHERE ${where} LIMIT ${ROWS_PER_CHUNK})`);
      } catch {
        // A WITHOUT ROWID table: at once.
        done += fresh(db, `DELETE FROM ${quoteIdent(table)} WHERE ${where}`).run(...params).changes;
        continue;
      }
      for (;;) {
        const { changes } = chunk.run(...params);
        done += changes;
        progress(done, total, 'rows deleted');
        await yieldTurn();
        if (changes < ROWS_PER_CHUNK) break;
      }
    }
  }, { foreignKeys: true });
  // Every worker drops what it read, and closes the sessions of the host's accounts (they no longer exist).
  const { kicked } = await afterReplace(services, `deleting the content of ${host}`);
  services.logger.notice({ host, rows: done, kicked }, 'deleted the content of %s: %d rows', host, done);
}
