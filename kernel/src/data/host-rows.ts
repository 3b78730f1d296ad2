/**
 * Which rows of a table belong to one virtual host, as an SQL condition on the table (SQLite), for the
 * commands that take a host's data apart from the rest (export2sql copies them, delete_mnesia deletes them):
 * - a `host` (or `server_host`) column: the rows of that host (accounts, rosters, vCards, offline messages…);
 * - a `service` column (MUC rooms, pubsub nodes): services of the host — the host itself, its subdomains
 *   (conference.example.org) and its accounts' PEP services (alice@example.org);
 * - a table whose rows hang off a parent table's numeric id (pubsub items, affiliations, subscriptions under
 *   pubsub_nodes; no foreign key says so): the rows of the parent rows selected;
 * - any other table is shared by all hosts (node identities, OAuth clients, the entity-capabilities cache).
 */

export type HostScope = 'host' | 'service' | 'parent' | 'shared';

export interface HostRows {
  readonly scope: HostScope;
  /** The condition, with `?` placeholders for `params`; none for a shared table. */
  readonly where?: string;
  readonly params: readonly string[];
}

const PARENT_LINKS: Readonly<Record<string, { column: string; parent: string; parentColumn: string }>> = {
  pubsub_items: { column: 'node_id', parent: 'pubsub_nodes', parentColumn: 'id' },
  pubsub_affiliations: { column: 'node_id', parent: 'pubsub_nodes', parentColumn: 'id' },
  pubsub_subscriptions: { column: 'node_id', parent: 'pubsub_nodes', parentColumn: 'id' },
};

const HOST_COLUMNS = ['host', 'server_host'];

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

function ownRows(columns: readonly string[], host: string): HostRows | undefined {
  const hostColumn = HOST_COLUMNS.find((c) => columns.includes(c));
  if (hostColumn) return { scope: 'host', where: `${quote(hostColumn)} = ?`, params: [host] };
  if (columns.includes('service')) {
    // substr(x, -n) is SQLite's "last n characters": exact suffixes, no LIKE wildcards to escape.
    const n = -(host.length + 1);
    return { scope: 'service', where: `("service" = ? OR substr("service", ${n}) = ? OR substr("service", ${n}) = ?)`, params: [host, `.${host}`, `@${host}`] };
  }
  return undefined;
}

/** The rows of `table` that belong to `host`; `columnsOf` gives a table's column names (undefined: no such table). */
export function hostRowsOf(table: string, columnsOf: (table: string) => readonly string[] | undefined, host: string): HostRows {
  const columns = columnsOf(table) ?? [];
  const own = ownRows(columns, host);
  if (own) return own;
  const link = PARENT_LINKS[table];
  const parentColumns = link && columns.includes(link.column) ? columnsOf(link.parent) : undefined;
  const parent = link && parentColumns && ownRows(parentColumns, host);
  if (link && parent) {
    return {
      scope: 'parent',
      where: `${quote(link.column)} IN (SELECT ${quote(link.parentColumn)} FROM ${quote(link.parent)} WHERE ${parent.where})`,
      params: parent.params,
    };
  }
  return { scope: 'shared', params: [] };
}
