/**
 * Kernel commands: moving data between databases (export2sql, update_sql). Declared here once; the handlers
 * work on the kernel's storage through kernel/src/data/sql/ (one file per job).
 */
import { defineCommand, type HandlersFor } from '@service/plugin-api';
import type { KernelServices } from '../modules/services.js';
import { dialectFor } from '../data/sql/dialect.js';
import { exportHostToSql } from '../data/sql/export.js';
import { migrationGroups } from '../data/sql/stores.js';
import { updateSchema } from '../data/sql/update.js';

export const sqlDataCommands = [
  defineCommand({
    name: 'export2sql',
    tags: ['mnesia'],
    desc: 'Export virtual host information from Mnesia tables to SQL file',
    longdesc:
      "Writes one virtual host's data as SQL for an EMPTY MariaDB/MySQL or PostgreSQL database: the schema exactly as this server's migrations create it there (with the rows that record them as applied, so a server started on that database uses it as is), then the host's rows from the stores that are SQLite files — the embedded store and, when sql_type is sqlite, the SQL store. Rows with a host column are the host's; MUC and pubsub rows are those of the host's services (the host, its subdomains, its accounts' PEP); node identities, OAuth clients and the capabilities cache are shared and exported whole. The file's ending names the database: `.pgsql` (or `.psql`) for PostgreSQL, `.mysql` (or `.mariadb`), optionally followed by `.sql`; with another ending the configured sql_type is used, which must then be mysql or pgsql. Load it with `mysql DATABASE < FILE` or `psql -v ON_ERROR_STOP=1 -d DATABASE -f FILE` (PostgreSQL loads it in one transaction). A relative path is relative to data_dir; the file is created 0600 and appears only once complete. Reports progress; the server keeps serving meanwhile.",
    args: [
      { name: 'host', type: 'string', desc: 'Vhost', example: 'example.com' },
      { name: 'file', type: 'string', desc: 'Full path to the destination SQL file', example: '/var/lib/service/example.com.pgsql' },
    ],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { host: 'example.com', file: '/var/lib/service/example.com.pgsql' }, result: 0 }],
  }),
  defineCommand({
    name: 'update_sql',
    tags: ['sql'],
    desc: 'Convert SQL DB to the new format',
    longdesc:
      "Applies the schema migrations a database has not recorded yet — the kernel's, OAuth's and each enabled module's, each in the store the server uses for it (sql or the embedded store) — logging and reporting as progress which ran, per owner. The server runs the same migrations when it starts and when a module starts, so this is for a database that changed under a running server (restored from an older dump, or copied from an older installation); a second run finds nothing to do. Each migration commits with its bookkeeping row: a failure leaves the earlier ones applied and the failing one not, and the next run continues from there.",
    note: 'improved in 23.04',
    args: [],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: {}, result: 0 }],
  }),
] as const;

export function sqlDataHandlers(services: KernelServices): HandlersFor<typeof sqlDataCommands> {
  return {
    export2sql: async ({ host, file }, call) => {
      const config = services.config();
      const vhost = services.accounts.servedHost(host);
      const dialect = dialectFor(file, config.sql.type);
      const report = await exportHostToSql({
        host: vhost,
        file,
        dataDir: config.dataDir,
        dialect,
        groups: await migrationGroups(services),
        storage: services.storage,
        progress: (done, total, label) => call.progress(done, total, label),
      });
      const rows = Object.values(report.rows).reduce((sum, n) => sum + n, 0);
      call.log.info({ host: vhost, file: report.file, dialect: dialect.name, rows, tables: report.rows, skipped: report.skipped }, 'export2sql wrote %d rows of %s to %s', rows, vhost, report.file);
    },
    update_sql: async (_args, call) => {
      const applied = await updateSchema(services.storage, await migrationGroups(services), (done, total, label) => call.progress(done, total, label));
      if (!applied.length) {
        call.log.info({ migrations: 0 }, 'update_sql: nothing to do, every store is at the current schema');
        return;
      }
      for (const group of applied) {
        call.log.info({ owner: group.owner, part: group.label, store: group.store, migrations: group.migrations }, 'update_sql applied %s', group.migrations.join(', '));
      }
    },
  };
}
