/**
 * Kernel commands: the embedded database's commands (ejabberd's "mnesia" family: backup, restore,
 * install_fallback, dump, load, dump_table, the table facts, delete_mnesia, mnesia_change_nodename). Declared
 * here once; the work is done in kernel/src/data/embedded/ (one file per job). They cover the embedded
 * store and, when sql_type is sqlite, the SQL database too (docs/data.md, docs/decisions.md).
 */
import type { HandlersFor } from '@service/plugin-api';
import { defineCommand } from '@service/plugin-api';
import type { KernelServices } from '../modules/services.js';
import { backup } from '../data/embedded/backup.js';
import { deleteHost } from '../data/embedded/delete-host.js';
import { dump } from '../data/embedded/dump.js';
import { installFallback } from '../data/embedded/fallback.js';
import { changeStorage, info, listTables, tableInfo } from '../data/embedded/info.js';
import { load } from '../data/embedded/load.js';
import { changeNodename } from '../data/embedded/nodename.js';
import { restore } from '../data/embedded/restore.js';

const COVERS =
  'It covers the embedded store (data_dir/embedded.db) and, when sql_type is sqlite, the SQL database; with MySQL or PostgreSQL those are left out (use mysqldump or pg_dump) and the result says so.';
const PATHS = 'A relative path is relative to data_dir.';
const fileArg = (desc: string, example: string) => ({ name: 'file', type: 'string', desc, example }) as const;

export const embeddedCommands = [
  defineCommand({
    name: 'backup',
    tags: ['mnesia'],
    desc: 'Backup the embedded database to a binary file',
    longdesc: `A consistent online backup while clients keep writing (SQLite's backup API, in steps: servicectl shows the pages copied), in one file (0600) that restore and install_fallback read. ${COVERS} ${PATHS} The server's own database files, directories and /proc, /sys, /dev are refused. Format: docs/data.md.`,
    args: [fileArg('Full path of the backup file', '/var/backups/service.backup')],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { file: '/var/backups/service.backup' }, result: 'Backup of sql (14 tables, 1203 rows) written to /var/backups/service.backup' }],
  }),
  defineCommand({
    name: 'restore',
    tags: ['mnesia'],
    desc: 'Restore the embedded database from a binary backup file',
    longdesc: `Immediate: the file is checked whole first (format, digests, SQLite integrity, migrations this release knows), then every database it holds is replaced in one transaction while clients' queries wait; a failure changes nothing. Caches are dropped, sessions of accounts the backup has go on, the others are closed with a stream error. Under workers, every worker drops what it read and closes its sessions of accounts that are gone; the other workers' writes wait for the transaction at most 5 s (SQLite's busy timeout), so a restore that takes longer makes theirs fail meanwhile: for a large one prefer install_fallback. ${PATHS}`,
    args: [fileArg('Full path of a file written by backup', '/var/backups/service.backup')],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { file: '/var/backups/service.backup' }, result: 'Restored sql (14 tables, 1203 rows) from /var/backups/service.backup (made 2026-01-01T00:00:00.000Z by node service@localhost)' }],
  }),
  defineCommand({
    name: 'install_fallback',
    tags: ['mnesia'],
    desc: 'Install a binary backup file as fallback for the next start',
    longdesc: `Checks the backup as restore does and copies it to data_dir/fallback.bak; the next start restores it before anything opens the databases, logs it, and keeps it as fallback-applied-<time>.bak. Restart needed (under workers: stop, then start the server; worker 1 restores it before the others start). ${PATHS}`,
    note: 'restore happens at next start; restart needed',
    args: [fileArg('Full path of a file written by backup', '/var/backups/service.backup')],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { file: '/var/backups/service.backup' }, result: 'Fallback installed from /var/backups/service.backup (sql (14 tables, 1203 rows)): it is restored at the next start (servicectl restart)' }],
  }),
  defineCommand({
    name: 'dump',
    tags: ['mnesia'],
    desc: 'Dump the embedded database to a text file',
    longdesc: `Every table of every covered database, as JSON lines (format in docs/data.md, stable across releases), from a consistent online snapshot, streamed to the file (0600). servicectl shows the rows dumped. ${PATHS}`,
    args: [fileArg('Full path of the text file', '/var/backups/service.dump')],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { file: '/var/backups/service.dump' }, result: 'Dumped 14 tables (1203 rows) to /var/backups/service.dump' }],
  }),
  defineCommand({
    name: 'dump_table',
    tags: ['mnesia'],
    desc: 'Dump a table of the embedded database to a text file',
    longdesc: `One table in the dump format (docs/data.md); load reads it back. A table both databases have is named \`sql.<table>\` or \`mnesia.<table>\` (as mnesia_list_tables shows). ${PATHS}`,
    args: [fileArg('Full path of the text file', '/var/backups/roster.dump'), { name: 'table', type: 'string', desc: 'Table name', example: 'roster' }],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { file: '/var/backups/roster.dump', table: 'roster' }, result: 'Dumped table roster (120 rows) to /var/backups/roster.dump' }],
  }),
  defineCommand({
    name: 'load',
    tags: ['mnesia'],
    desc: 'Restore the embedded database from a text file',
    longdesc: `Immediate: the dump is checked whole first (every table and column must exist here), then each table it holds is emptied and refilled, all in one transaction: all or nothing. Tables the dump lacks are left as they are; schema_migrations keeps this server's rows. Under workers, as restore. ${PATHS}`,
    args: [fileArg('Full path of a file written by dump or dump_table', '/var/backups/service.dump')],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { file: '/var/backups/service.dump' }, result: 'Loaded 14 tables (1203 rows) from /var/backups/service.dump' }],
  }),
  defineCommand({
    name: 'mnesia_info',
    tags: ['mnesia'],
    desc: 'Dump info on global Mnesia state',
    longdesc: `The covered SQLite databases: file, SQLite version, journal mode, pages, size, tables and rows. ${COVERS}`,
    args: [],
    result: { name: 'res', type: 'string' },
    examples: [{ args: {}, result: 'node: service@localhost\nsql store: /var/lib/service/service.db\n  sqlite 3.53.2, journal_mode wal, page_size 4096, pages 120 (0 free), file size 491520 bytes (with WAL)\n  tables: 14, rows: 1203' }],
  }),
  defineCommand({
    name: 'mnesia_table_info',
    tags: ['mnesia'],
    desc: 'Dump info on a table of the embedded database',
    longdesc: 'Store and file, storage type, row count, size (the table and its indexes, from dbstat), columns and indexes.',
    args: [{ name: 'table', type: 'string', desc: 'Table name', example: 'roster' }],
    result: { name: 'res', type: 'string' },
    examples: [{ args: { table: 'roster' }, result: 'name: roster\nstore: sql (/var/lib/service/service.db)\nstorage_type: disc_copies\nelements: 120\nmemory_kb: 24\nmemory_mb: 0' }],
  }),
  defineCommand({
    name: 'mnesia_list_tables',
    tags: ['mnesia'],
    desc: 'List of the embedded database tables',
    longdesc:
      'Each table of the covered databases: its name (`sql.<table>` / `mnesia.<table>` when both have it), storage type (always disc_copies: a SQLite file on disk, cached in memory), row count, and size of the table with its indexes in KiB and MiB (rounded).',
    note: 'added 25.03',
    args: [],
    result: {
      name: 'tables',
      type: {
        list: {
          object: [
            { name: 'name', type: 'string' },
            { name: 'storage_type', type: 'string' },
            { name: 'elements', type: 'integer' },
            { name: 'memory_kb', type: 'integer' },
            { name: 'memory_mb', type: 'integer' },
          ],
        },
        item: 'table',
      },
    },
    examples: [{ args: {}, result: [{ name: 'roster', storage_type: 'disc_copies', elements: 120, memory_kb: 24, memory_mb: 0 }] }],
  }),
  defineCommand({
    name: 'mnesia_table_change_storage',
    tags: ['mnesia'],
    desc: 'Change storage type of a table of the embedded database',
    longdesc:
      'Every table is disc_copies here (a SQLite file on disk whose used pages SQLite caches in memory): asking for disc_copies succeeds and changes nothing; ram_copies and disc_only_copies have no equivalent and are refused with an error that says so.',
    note: 'added 25.03',
    args: [
      { name: 'table', type: 'string', desc: 'Table name', example: 'roster' },
      { name: 'storage_type', type: 'string', desc: 'ram_copies, disc_copies or disc_only_copies', example: 'disc_copies' },
    ],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { table: 'roster', storage_type: 'disc_copies' }, result: 'Table roster already has storage type disc_copies: nothing to change' }],
  }),
  defineCommand({
    name: 'delete_mnesia',
    tags: ['mnesia'],
    desc: 'Delete all content of a virtual host from the embedded database',
    longdesc:
      "Every row whose `host` (or `server_host`) column names the host, in every table of the covered databases, in one transaction (servicectl shows the rows deleted); then caches are dropped and the host's sessions closed. The host must be a virtual host of this server or one stored data still names.",
    args: [{ name: 'host', type: 'string', desc: 'Virtual host', example: 'example.org' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { host: 'example.org' }, result: 0 }],
  }),
  defineCommand({
    name: 'mnesia_change_nodename',
    tags: ['mnesia'],
    desc: 'Change the node name in a backup file',
    longdesc: `Writes a copy of \`oldbackup\` as \`newbackup\` with the node \`oldnodename\` renamed \`newnodename\` (in the backup's manifest and its stored node identities); the old backup is left as it is. ${PATHS}`,
    args: [
      { name: 'oldnodename', type: 'string', desc: 'Name of the old node', example: 'service@oldmachine' },
      { name: 'newnodename', type: 'string', desc: 'Name of the new node', example: 'service@newmachine' },
      { name: 'oldbackup', type: 'string', desc: 'Path to old backup file', example: '/var/backups/old.backup' },
      { name: 'newbackup', type: 'string', desc: 'Path to the new backup file', example: '/var/backups/new.backup' },
    ],
    result: { name: 'res', type: 'restuple' },
    examples: [
      {
        args: { oldnodename: 'service@oldmachine', newnodename: 'service@newmachine', oldbackup: '/var/backups/old.backup', newbackup: '/var/backups/new.backup' },
        result: 'Backup /var/backups/old.backup written as /var/backups/new.backup with node service@oldmachine renamed service@newmachine',
      },
    ],
  }),
] as const;

export function embeddedHandlers(services: KernelServices): HandlersFor<typeof embeddedCommands> {
  return {
    backup: ({ file }, call) => backup(services, file, (d, t, l) => call.progress(d, t, l)),
    restore: ({ file }, call) => restore(services, file, (d, t, l) => call.progress(d, t, l)),
    install_fallback: ({ file }, call) => installFallback(services, file, (d, t, l) => call.progress(d, t, l)),
    dump: ({ file }, call) => dump(services, file, undefined, (d, t, l) => call.progress(d, t, l)),
    dump_table: ({ file, table }, call) => dump(services, file, table, (d, t, l) => call.progress(d, t, l)),
    load: ({ file }, call) => load(services, file, (d, t, l) => call.progress(d, t, l)),
    mnesia_info: () => info(services),
    mnesia_table_info: ({ table }) => tableInfo(services, table),
    mnesia_list_tables: () => listTables(services),
    mnesia_table_change_storage: ({ table, storage_type }) => changeStorage(services, table, storage_type),
    delete_mnesia: ({ host }, call) => deleteHost(services, host, (d, t, l) => call.progress(d, t, l)),
    mnesia_change_nodename: (args, call) => changeNodename(services, args, (d, t, l) => call.progress(d, t, l)),
  };
}
