/**
 * Schema migrations: each owner (the kernel, or a module) declares an ordered list of migrations and the
 * runner applies the ones a database has not seen yet, recording them in `schema_migrations`.
 *
 * Applied migrations are tracked by id, not by position, so an owner may split its list across several
 * arrays (one per feature) as long as ids stay unique within the owner.
 */
import knexFactory, { type Knex } from 'knex';
import { sqlClientOf, type Migration, type SqlClient } from '@service/plugin-api';

export const MIGRATIONS_TABLE = 'schema_migrations';

/** Owner and id share the column width of the bookkeeping table. */
const MAX_NAME_LENGTH = 100;

/** Seconds MySQL waits for another process's migration lock before giving up. */
const MYSQL_LOCK_WAIT_SECONDS = 120;
const MYSQL_LOCK_NAME = 'service_schema_migrations';
/** An arbitrary constant shared by every process of this server: the advisory lock guarding migrations. */
const PG_ADVISORY_LOCK_KEY = 0x5e7c_0de;

/** Applies the migrations of `owner` not applied yet, in array order; returns the ids applied now. */
export async function runMigrations(knex: Knex, owner: string, migrations: readonly Migration[]): Promise<string[]> {
  checkNames(owner, migrations);
  await ensureMigrationsTable(knex);
  const alreadyApplied = await appliedIds(knex, owner);
  const pending = migrations.filter((m) => !alreadyApplied.has(m.id));
  if (!pending.length) return [];
  return sqlClientOf(knex) === 'mysql2'
    ? applyUnderMysqlLock(knex, owner, pending)
    : applyInTransactions(knex, owner, pending);
}

/**
 * The migrations of `owner` that the database has not recorded as applied yet, in array order; reads only
 * (the bookkeeping table may not exist yet: then every migration is pending). For update_sql's report.
 */
export async function pendingMigrations(knex: Knex, owner: string, migrations: readonly Migration[]): Promise<Migration[]> {
  if (!(await knex.schema.hasTable(MIGRATIONS_TABLE))) return [...migrations];
  const alreadyApplied = await appliedIds(knex, owner);
  return migrations.filter((m) => !alreadyApplied.has(m.id));
}

/** SQL text of all the migrations for a dialect, for `print_sql_schema`; needs no connection. */
export function renderMigrations(client: SqlClient, migrations: readonly Migration[]): string {
  const offline = knexFactory({ client, useNullAsDefault: true });
  try {
    return migrations
      .map((m) => {
        const sql = m.up(offline).toString().trim();
        return `-- ${m.id}\n${sql}${sql.endsWith(';') ? '' : ';'}\n`;
      })
      .join('\n');
  } finally {
    // No pool was opened without a connection; destroy just releases the client.
    void offline.destroy();
  }
}

function checkNames(owner: string, migrations: readonly Migration[]): void {
  if (!owner || owner.length > MAX_NAME_LENGTH) {
    throw new Error(`migration owner must be 1 to ${MAX_NAME_LENGTH} characters, got '${owner}'`);
  }
  const seen = new Set<string>();
  for (const { id } of migrations) {
    if (!id || id.length > MAX_NAME_LENGTH) {
      throw new Error(`migration ids of ${owner} must be 1 to ${MAX_NAME_LENGTH} characters, got '${id}'`);
    }
    if (seen.has(id)) throw new Error(`migration id '${id}' appears twice in the migrations of ${owner}`);
    seen.add(id);
  }
}

function createMigrationsTable(knex: Knex): Knex.SchemaBuilder {
  return knex.schema.createTable(MIGRATIONS_TABLE, (table) => {
    // Ids are compared exactly; MySQL's default collation would not.
    if (sqlClientOf(knex) === 'mysql2') table.collate('utf8mb4_bin');
    table.string('owner', MAX_NAME_LENGTH).notNullable();
    table.string('id', MAX_NAME_LENGTH).notNullable();
    table.bigInteger('applied_at').notNullable();
    table.primary(['owner', 'id']);
  });
}

/**
 * The whole schema as SQL, for `print_sql_schema`: the bookkeeping table, then each owner's migrations
 * followed by the rows that record them as applied — so a database created from this text is one the
 * server starts on without trying to create the tables again.
 */
export function renderSchema(client: SqlClient, owners: ReadonlyArray<{ owner: string; migrations: readonly Migration[] }>): string {
  const offline = knexFactory({ client, useNullAsDefault: true });
  try {
    const parts = [`-- ${MIGRATIONS_TABLE}\n${createMigrationsTable(offline).toString().trim()};\n`];
    for (const { owner, migrations } of owners) {
      if (!migrations.length) continue;
      checkNames(owner, migrations);
      parts.push(`-- tables of ${owner}\n${renderMigrations(client, migrations)}`);
      const rows = migrations.map((m) => ({ owner, id: m.id, applied_at: 0 }));
      parts.push(`${offline(MIGRATIONS_TABLE).insert(rows).toString()};\n`);
    }
    return parts.join('\n');
  } finally {
    void offline.destroy();
  }
}

async function ensureMigrationsTable(knex: Knex): Promise<void> {
  if (await knex.schema.hasTable(MIGRATIONS_TABLE)) return;
  try {
    await createMigrationsTable(knex);
  } catch (err) {
    // Another process may have created it between our check and our create.
    if (!(await knex.schema.hasTable(MIGRATIONS_TABLE))) throw err;
  }
}

async function appliedIds(knex: Knex, owner: string): Promise<Set<string>> {
  const rows: { id: string }[] = await knex(MIGRATIONS_TABLE).select('id').where({ owner });
  return new Set(rows.map((r) => r.id));
}

async function record(knex: Knex, owner: string, id: string): Promise<void> {
  await knex(MIGRATIONS_TABLE).insert({ owner, id, applied_at: Date.now() });
}

/**
 * SQLite and PostgreSQL run DDL inside transactions, so each migration and its record commit together.
 * The transaction first takes a lock that a concurrent migrator would also need, then re-checks whether
 * the migration was applied meanwhile: the second process waits, then skips.
 */
async function applyInTransactions(knex: Knex, owner: string, pending: readonly Migration[]): Promise<string[]> {
  const appliedNow: string[] = [];
  for (const migration of pending) {
    const applied = await knex.transaction(async (trx) => {
      await takeMigrationLock(trx);
      const exists = await trx(MIGRATIONS_TABLE).first('id').where({ owner, id: migration.id });
      if (exists) return false;
      await runOne(trx, owner, migration);
      await record(trx, owner, migration.id);
      return true;
    });
    if (applied) appliedNow.push(migration.id);
  }
  return appliedNow;
}

async function takeMigrationLock(trx: Knex.Transaction): Promise<void> {
  if (sqlClientOf(trx) === 'pg') {
    await trx.raw('select pg_advisory_xact_lock(?)', [PG_ADVISORY_LOCK_KEY]);
  } else {
    // SQLite grants the database write lock to the first writing statement of a transaction, even one
    // that changes nothing; later writers wait (busy_timeout) rather than interleave.
    await trx(MIGRATIONS_TABLE).update({ applied_at: trx.ref('applied_at') }).whereRaw('1 = 0');
  }
}

/**
 * MySQL commits implicitly around every DDL statement, so a transaction cannot protect a migration.
 * A named lock serializes migrating processes instead; it belongs to a session, so every statement runs
 * on one pinned connection (a knex transaction is used only as that pin). The record is written after
 * the DDL succeeded, so a failed migration is retried on the next start.
 */
async function applyUnderMysqlLock(knex: Knex, owner: string, pending: readonly Migration[]): Promise<string[]> {
  return knex.transaction(async (conn) => {
    const [rows] = (await conn.raw('select get_lock(?, ?) as locked', [MYSQL_LOCK_NAME, MYSQL_LOCK_WAIT_SECONDS])) as [
      { locked: number | null }[],
    ];
    if (rows[0]?.locked !== 1) {
      throw new Error(`timed out after ${MYSQL_LOCK_WAIT_SECONDS}s waiting for another process to finish migrating`);
    }
    try {
      const applied = await appliedIds(conn, owner);
      const appliedNow: string[] = [];
      for (const migration of pending) {
        if (applied.has(migration.id)) continue;
        await runOne(conn, owner, migration);
        await record(conn, owner, migration.id);
        appliedNow.push(migration.id);
      }
      return appliedNow;
    } finally {
      await conn.raw('select release_lock(?)', [MYSQL_LOCK_NAME]);
    }
  });
}

async function runOne(knex: Knex, owner: string, migration: Migration): Promise<void> {
  try {
    await migration.up(knex);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`migration ${owner}/${migration.id} failed: ${reason}`, { cause: err });
  }
}
