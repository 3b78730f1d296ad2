/**
 * Which migration lists live in which store: the kernel's (accounts in the authentication store, node
 * identities in default_db), OAuth's, and each enabled module's (its db_type, else default_db) — the same
 * choices the server makes when it starts. export2sql and update_sql both walk this list.
 */
import type { DbKind, Migration } from '@service/plugin-api';
import { ACCOUNT_MIGRATIONS } from '../../accounts/migrations.js';
import type { Config } from '../../config/load.js';
import { desiredModules } from '../../modules/desired.js';
import type { KernelServices } from '../../modules/services.js';
import { NODE_MIGRATIONS } from '../../node/identity.js';
import { OAUTH_MIGRATIONS } from '../../oauth/migrations.js';

export interface MigrationGroup {
  /** The owner in schema_migrations: `kernel`, `service_oauth` or a module's name. */
  readonly owner: string;
  /** What the group holds, for reports: `accounts`, `nodes`, `oauth` or the module's name. */
  readonly label: string;
  readonly migrations: readonly Migration[];
  readonly kind: DbKind;
}

/** Where the server keeps accounts: the SQL store when auth_method names sql, else the embedded one. */
export function authStore(config: Config): DbKind {
  return config.auth_method.includes('sql') ? 'sql' : 'mnesia';
}

/**
 * Every migration list of the running configuration with its store, kernel first, then the modules in
 * configuration order. A module whose instances use both stores (host_config db_type) appears once per store.
 */
export async function migrationGroups(services: KernelServices): Promise<MigrationGroup[]> {
  const config = services.config();
  const groups: MigrationGroup[] = [
    { owner: 'kernel', label: 'accounts', migrations: ACCOUNT_MIGRATIONS, kind: authStore(config) },
    { owner: 'kernel', label: 'nodes', migrations: NODE_MIGRATIONS, kind: config.default_db },
    { owner: 'service_oauth', label: 'oauth', migrations: OAUTH_MIGRATIONS, kind: config.oauth_db_type ?? config.default_db },
  ];
  const seen = new Set<string>();
  for (const { module, options } of desiredModules(config).values()) {
    const kind = (options.db_type as DbKind | undefined) ?? config.default_db;
    if (seen.has(`${module}/${kind}`)) continue;
    seen.add(`${module}/${kind}`);
    const migrations = (await services.catalog.definition(module)).migrations ?? [];
    if (migrations.length) groups.push({ owner: module, label: module, migrations, kind });
  }
  return groups;
}
