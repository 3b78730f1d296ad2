/**
 * Cluster nodes for the tests: one `servicectl foreground` process per node on loopback, with its own c2s
 * port and node name, the shared SQL settings, and mod_cluster (fast heartbeats) beside the given modules;
 * and the HTTP API of a node. The cluster suites start their nodes with it.
 */
import { freePort, openConfig, spawnServer, type ServerProcess } from './process.js';
import { request, type RawConfig } from './server.js';
import { TLS_FIXTURE } from './xmpp.js';

export interface ClusterNodeProcess {
  readonly proc: ServerProcess;
  /** Its c2s port (plain, STARTTLS offered). */
  readonly c2s: number;
  /** Its node_name. */
  readonly name: string;
}

export interface ClusterNodeOptions {
  readonly name: string;
  /** The cluster's name (its Redis keys) and cookie. */
  readonly cluster: string;
  readonly cookie: string;
  /** The shared database (serverSqlConfig). */
  readonly sql: RawConfig;
  /** The modules besides mod_cluster. */
  readonly modules: Record<string, unknown>;
  /** More top-level settings, given the open configuration. */
  readonly extra?: (config: RawConfig) => RawConfig;
}

export async function startClusterNode(options: ClusterNodeOptions): Promise<ClusterNodeProcess> {
  const c2s = await freePort();
  const proc = await spawnServer((port) => {
    const config = openConfig(port);
    (config.listen as unknown[]).push({ port: c2s, ip: '127.0.0.1', module: 'service_c2s' });
    return {
      ...config,
      ...options.sql,
      node_name: options.name,
      certfiles: [TLS_FIXTURE],
      ...(options.extra?.(config) ?? {}),
      modules: {
        ...options.modules,
        mod_cluster: { cluster: options.cluster, cookie: options.cookie, heartbeat_interval: 200, heartbeat_timeout: 1500 },
      },
    };
  });
  return { proc, c2s, name: options.name };
}

/** POSTs a command to a node's HTTP API (open to loopback in the tests' configuration). */
export async function nodeApi(node: ClusterNodeProcess, command: string, args: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
  const res = await request(`http://127.0.0.1:${node.proc.port}/api/${command}`, { method: 'POST', body: JSON.stringify(args) });
  return { status: res.status, body: JSON.parse(res.text) as any };
}
