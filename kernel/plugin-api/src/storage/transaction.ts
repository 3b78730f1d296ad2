/**
 * Transactions that survive the database's deadlock resolution. InnoDB (MariaDB/MySQL) takes next-key locks,
 * so two transactions changing different accounts' rows of one table (delete then insert, as replacing a
 * roster item's groups or a privacy list's items does) can deadlock; the database rolls one back whole and
 * answers it with an error (MySQL 1213; PostgreSQL 40P01, or 40001 for a serialization failure). Retrying is
 * the documented remedy. Without it a valid request fails with an internal error now and then under load.
 *
 * Safe only for work that decides from what it reads inside the transaction and acts on the world (pushes,
 * presence, answers) after the commit: a retried attempt must leave no trace of the one rolled back.
 */
import type { Knex } from 'knex';

/** Attempts in all, for a transaction chosen as a deadlock victim again and again. */
const ATTEMPTS = 5;

/** A transaction the database rolled back to break a deadlock, or to keep transactions serializable. */
export function isDeadlock(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, errno } = err as { code?: unknown; errno?: unknown };
  return code === 'ER_LOCK_DEADLOCK' || errno === 1213 || code === '40P01' || code === '40001';
}

/** Runs `work` in a transaction of `db`; a deadlock victim runs again, after a short random pause. */
export async function retryingTransaction<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(work);
    } catch (err) {
      if (attempt >= ATTEMPTS || !isDeadlock(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}
