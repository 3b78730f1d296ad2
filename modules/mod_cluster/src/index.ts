/**
 * mod_cluster: several nodes serve the same virtual hosts. Live state is Redis's (the session directory,
 * membership with heartbeats, each node's inbox); everything persistent is the shared SQL database the
 * nodes are configured with. It plugs into the plugin API's session directory (a session source: the other
 * nodes' sessions, which the router then reaches like this node's) and leaves a single node without it
 * exactly as it was. docs/cluster.md explains the setup.
 */
import { defineModule, provide, type HookRegistration } from '@service/plugin-api';
import { ClusterNode } from './cluster.js';
import { clusterCommands, clusterHandlers } from './commands.js';
import { clusterService } from './public-api.js';

export default defineModule({
  name: 'mod_cluster',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Clustering over Redis and a shared SQL database: sessions, routing and membership across nodes',
  provides: [clusterService],
  options: {
    redis_url: { type: 'string', default: 'redis://127.0.0.1:6379', doc: 'The Redis server every node of the cluster uses (redis://[user:password@]host:port[/db]).' },
    cluster: { type: 'string', default: 'service', pattern: /^[A-Za-z0-9_.-]+$/, patternDoc: 'letters, digits, _ . -', doc: 'The cluster\'s name: its keys in Redis start with svc:<cluster>:, so clusters can share a Redis.' },
    cookie: { type: 'string', nonEmpty: true, required: true, doc: 'The cluster\'s shared secret: a node with another cookie is refused. Never logged; dump_config masks it.' },
    heartbeat_interval: { type: 'integer', min: 100, default: 1000, doc: 'Milliseconds between two heartbeats of a node.' },
    heartbeat_timeout: { type: 'integer', min: 500, default: 5000, doc: 'Milliseconds without a heartbeat after which a node is dead: its sessions end and its stanzas are routed again.' },
  },
  commands: clusterCommands,
  async start(ctx) {
    const { options, services } = ctx;
    // Each worker would join as a node of the same name. Across machines, a node is one process for now.
    if (services.server.worker.count > 1) {
      throw new Error(`mod_cluster needs one process per node: this node runs ${services.server.worker.count} workers (set workers: 1, and run one node per machine)`);
    }
    if (options.heartbeat_timeout <= options.heartbeat_interval) {
      throw new Error(`heartbeat_timeout (${options.heartbeat_timeout} ms) must be longer than heartbeat_interval (${options.heartbeat_interval} ms)`);
    }
    const cluster = new ClusterNode(
      {
        redisUrl: options.redis_url,
        cluster: options.cluster,
        cookie: options.cookie,
        node: services.config().node_name,
        version: services.server.version,
        heartbeatMs: options.heartbeat_interval,
        timeoutMs: options.heartbeat_timeout,
      },
      services,
      ctx.logger,
    );
    await cluster.start();
    // What this node publishes: its own sessions, while it is a member (leave_cluster makes it serve alone).
    const local = (session: Parameters<typeof services.xmpp.isLocal>[0]) => cluster.member && services.xmpp.isLocal(session);
    const hooks: HookRegistration[] = [
      // Published once bound, before anything is routed to it from another node.
      { hook: 'c2s_session_bound', handler: (session) => (local(session) ? cluster.directory.publish(session) : undefined), priority: 10 },
      { hook: 'c2s_presence_changed', handler: (session) => (local(session) ? cluster.directory.update(session) : undefined) },
      // A session that moved here for a resumption is this node's now: its record names this node.
      { hook: 'c2s_session_moved_in', handler: (session) => (local(session) ? cluster.directory.publish(session) : undefined) },
      { hook: 'c2s_session_closed', handler: (session) => (local(session) ? cluster.directory.unpublish(session) : undefined), priority: 10 },
      // What a cache of this node forgets, every node forgets: a password changed here, a token revoked, a ban.
      { hook: 'cache_invalidated', handler: (cache, key) => (cluster.member ? cluster.invalidations.publish(cache, key) : undefined) },
      { hook: 'clear_cache', handler: () => (cluster.member ? cluster.invalidations.publish('*') : undefined) },
    ];
    return {
      handlers: clusterHandlers(cluster, services),
      hooks,
      services: [provide(clusterService, cluster)],
      xmpp: { sessionSources: [cluster.source], sessionMovers: [cluster.moves] },
      nodeTransport: cluster.transport,
      stop: () => cluster.stop(),
    };
  },
});
