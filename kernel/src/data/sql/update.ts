/**
 * update_sql: brings every store to the current schema by applying the migrations it has not recorded yet —
 * the kernel's, OAuth's and each enabled module's, each in the store the server uses for it — and says what
 * it did. The server applies the same migrations when it starts and when a module starts, so this finds work
 * only when a database changed under a running server (restored from an older backup, or pointed at by a
 * store another installation created) — a second run finds nothing to do.
 *
 * Each migration commits with its bookkeeping row (SQLite, PostgreSQL: one transaction; MySQL: the row right
 * after the DDL, under a lock): a failure stops the run with the earlier migrations applied and recorded and
 * the failing one not, so the next run retries from there.
 */
import { failed } from '@service/plugin-api';
import type { Storage } from '../../storage/database.js';
import { pendingMigrations } from '../../storage/migrations.js';
import type { MigrationGroup } from './stores.js';

export interface AppliedGroup {
  readonly owner: string;
  readonly label: string;
  readonly store: string;
  readonly migrations: readonly string[];
}

export async function updateSchema(
  storage: Storage,
  groups: readonly MigrationGroup[],
  progress: (done: number, total: number, label: string) => void,
): Promise<AppliedGroup[]> {
  const work: Array<{ group: MigrationGroup; pending: string[] }> = [];
  for (const group of groups) {
    work.push({ group, pending: (await pendingMigrations(storage.db(group.kind), group.owner, group.migrations)).map((m) => m.id) });
  }
  const total = work.reduce((sum, w) => sum + w.pending.length, 0);
  progress(0, total, 'migrations');
  const applied: AppliedGroup[] = [];
  let done = 0;
  for (const { group, pending } of work) {
    if (!pending.length) continue;
    let ids: string[];
    try {
      ids = await storage.migrate(group.owner, group.migrations, group.kind);
    } catch (err) {
      // The failing migration is rolled back (or, on MySQL, not recorded); the ones before it stay applied.
      const left = new Set((await pendingMigrations(storage.db(group.kind), group.owner, group.migrations)).map((m) => m.id));
      const here = pending.filter((id) => !left.has(id));
      if (here.length) applied.push({ owner: group.owner, label: group.label, store: group.kind, migrations: here });
      const before = applied.map((g) => `${g.owner}: ${g.migrations.join(', ')}`).join('; ');
      throw failed(`${(err as Error).message}${before ? ` (applied before the failure: ${before})` : ' (nothing was applied)'}`);
    }
    done += ids.length;
    progress(done, total, `${group.label} (${group.kind})`);
    if (ids.length) applied.push({ owner: group.owner, label: group.label, store: group.kind, migrations: ids });
  }
  return applied;
}
