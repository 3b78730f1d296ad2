/**
 * The command-line-only commands: mnesia_info_ctl, mnesia_change, print_sql_schema (and help, which
 * servicectl renders itself). Other frontends refuse them; they print through the call's output channel.
 */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Knex } from 'knex';
import { ACCOUNT_MIGRATIONS } from '../accounts/migrations.js';
import { renderOverview } from '../docs/help-text.js';
import { badArgument, failed, notFound } from '@service/plugin-api';
import { defineCommand, type HandlersFor } from '@service/plugin-api';
import type { KernelServices } from '../modules/services.js';
import { NODE_MIGRATIONS } from '../node/identity.js';
import { OAUTH_MIGRATIONS } from '../oauth/migrations.js';
import { EMBEDDED_DB_FILE } from '../storage/database.js';
import { renderSchema } from '../storage/migrations.js';
import { type Migration, type SqlClient } from '@service/plugin-api';
import { KERNEL_VERSION } from '../version.js';

const DB_TYPES: Record<string, SqlClient> = { pgsql: 'pg', mysql: 'mysql2', sqlite: 'better-sqlite3' };
const BOOLEANS: Record<string, boolean> = { '0': false, false: false, '1': true, true: true };

export const consoleCommands = [
  defineCommand({
    name: 'help',
    tags: ['ejabberdctl'],
    desc: 'Get list of commands, or help of a command',
    longdesc:
      'Prints the commands grouped by tag. `servicectl help <command>` documents a command (arguments with their types and command-line forms, result, examples, module) and `servicectl help <tag>` lists a tag\'s commands; servicectl renders those itself, from the same declarations, also when the server is stopped.',
    cliOnly: true,
    offline: 'allowed',
    args: [],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: {}, result: 0 }],
  }),
  defineCommand({
    name: 'mnesia_info_ctl',
    tags: ['ejabberdctl', 'mnesia'],
    desc: 'Show information of the embedded database',
    longdesc:
      'Prints a readable summary of the embedded store (the SQLite file that stands where ejabberd has Mnesia) and, when the SQL store is SQLite too, of that file: path, size, and each table with its row count. Runs with the server running or stopped.',
    note: 'renamed in 24.02',
    cliOnly: true,
    offline: 'allowed',
    args: [],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: {}, result: 0 }],
  }),
  defineCommand({
    name: 'mnesia_change',
    tags: ['ejabberdctl', 'mnesia'],
    desc: 'Change the node name in the stored data',
    longdesc:
      'After changing `node_name` in the configuration, renames the old node identity to the new one in stored data (and modules rename their node-bound rows). Must run with the server stopped: `servicectl stop`, then `servicectl mnesia_change <old_node_name>`, then start it again.',
    note: 'added in 25.08',
    cliOnly: true,
    offline: 'required',
    args: [{ name: 'old_node_name', type: 'string', desc: 'The name the node had before', example: 'service@oldhost' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { old_node_name: 'service@oldhost' }, result: 0 }],
  }),
  defineCommand({
    name: 'print_sql_schema',
    tags: ['ejabberdctl', 'sql'],
    desc: 'Print SQL schema for the given RDBMS',
    longdesc:
      "Prints the tables that the migrations of the kernel and of every enabled module create on that database, followed by the rows that record them as applied, so a database created from it is used as is. The schema always has the `host` column of ejabberd's new (multi-host) schema; `new_schema` is accepted for compatibility. Runs with the server running or stopped.",
    note: 'added in 24.02',
    cliOnly: true,
    offline: 'allowed',
    args: [
      { name: 'db_type', type: 'string', desc: 'Database type: pgsql, mysql or sqlite', example: 'pgsql' },
      { name: 'db_version', type: 'string', desc: 'Your database version: 16.0, 10.11, 3.45… (informational)', example: '16.0' },
      { name: 'new_schema', type: 'string', desc: 'Use multihost schema: 0, false, 1 or true', example: '1' },
    ],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { db_type: 'pgsql', db_version: '16.0', new_schema: '1' }, result: 0 }],
  }),
] as const;

async function tableCounts(knex: Knex): Promise<Array<{ table: string; rows: number }>> {
  const tables: Array<{ name: string }> = await knex.raw("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name");
  const out: Array<{ table: string; rows: number }> = [];
  for (const { name } of tables) {
    const [row] = (await knex(name).count({ n: '*' })) as Array<{ n: number | string }>;
    out.push({ table: name, rows: Number(row?.n ?? 0) });
  }
  return out;
}

function size(file: string): string {
  const bytes = statSync(file).size + (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function table(rows: Array<{ table: string; rows: number }>): string {
  const width = Math.max(5, ...rows.map((r) => r.table.length));
  return [`  ${'table'.padEnd(width)}  rows`, ...rows.map((r) => `  ${r.table.padEnd(width)}  ${r.rows}`)].join('\n');
}

export function consoleHandlers(services: KernelServices): HandlersFor<typeof consoleCommands> {
  return {
    help: async (_args, call) => call.output(renderOverview(await services.commandDocs())),
    mnesia_info_ctl: async (_args, call) => {
      const config = services.config();
      const { storage } = services;
      const embedded = join(config.dataDir, EMBEDDED_DB_FILE);
      const sections: string[] = [];
      if (existsSync(embedded)) {
        sections.push(`Embedded store: ${embedded} (${size(embedded)})\n${table(await tableCounts(storage.db('mnesia')))}`);
      } else {
        sections.push(`Embedded store: ${embedded} does not exist yet (nothing is stored there: default_db is ${config.default_db})`);
      }
      if (config.sql.type === 'sqlite') {
        const file = resolve(config.dataDir, config.sql.database);
        if (file !== embedded) sections.push(`SQL store (sqlite): ${file} (${size(file)})\n${table(await tableCounts(storage.db('sql')))}`);
      } else {
        sections.push(`SQL store (${config.sql.type}): database '${config.sql.database}' at ${config.sql.server}`);
      }
      call.output(`${sections.join('\n\n')}\n`);
    },
    mnesia_change: async ({ old_node_name }, call) => {
      if (services.server.mode !== 'maintenance') {
        throw failed('mnesia_change must run with the server stopped: run servicectl stop, then servicectl mnesia_change <old_node_name>');
      }
      const current = services.config().node_name;
      if (old_node_name === current) throw badArgument('old_node_name', `the node is already named ${current}: set the new name in node_name first`);
      if (!(await services.node.rename(old_node_name, current, services.hooks))) {
        const known = (await services.node.known()).map((n) => n.name);
        throw notFound(`no stored data of node '${old_node_name}'; stored nodes: ${known.join(', ') || 'none'}`);
      }
      call.output(`Stored data of node ${old_node_name} now belongs to ${current}.\n`);
    },
    print_sql_schema: async ({ db_type, db_version, new_schema }, call) => {
      const client = DB_TYPES[db_type];
      if (!client) throw badArgument('db_type', `unknown db_type '${db_type}': expected pgsql, mysql or sqlite`);
      if (!(new_schema in BOOLEANS)) throw badArgument('new_schema', `new_schema must be 0, false, 1 or true, got '${new_schema}'`);
      // The kernel's own tables, as the server migrates them at start (server.ts): accounts and nodes, then OAuth's.
      const owners: Array<{ owner: string; migrations: readonly Migration[] }> = [
        { owner: 'kernel', migrations: [...ACCOUNT_MIGRATIONS, ...NODE_MIGRATIONS] },
        { owner: 'service_oauth', migrations: OAUTH_MIGRATIONS },
      ];
      for (const module of services.config().modules.keys()) {
        owners.push({ owner: module, migrations: (await services.catalog.definition(module)).migrations ?? [] });
      }
      const header = [
        `-- Schema of service ${KERNEL_VERSION} for ${db_type}${db_version ? ` ${db_version}` : ''}: the kernel and the enabled modules (${[...services.config().modules.keys()].join(', ') || 'none'}).`,
        "-- Every table keeps the vhost in a host column (ejabberd's new schema)" + (BOOLEANS[new_schema] ? '.' : ', whatever new_schema says.'),
      ];
      call.output(`${header.join('\n')}\n\n${renderSchema(client, owners)}`);
    },
  };
}
