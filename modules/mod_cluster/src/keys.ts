/**
 * The Redis keys of one cluster, in one place: every key starts with `svc:<cluster>:` so several clusters
 * (or test runs) can share a Redis server without seeing each other.
 *
 *   nodes                 hash  node name → NodeRecord (JSON): who is a member
 *   alive:<node>          string with a TTL, refreshed by the node's heartbeat: gone = the node is dead
 *   master                string: the node that runs cluster-wide jobs
 *   cookie                string: sha256 of the cluster's shared secret, set by the first node
 *   sessions:<bare>       hash  resource → SessionRecord (JSON): where each session of an account runs
 *   node-sessions:<node>  set   the full JIDs bound on a node (to clean up after it dies)
 *   inbox:<node>          stream of stanzas and commands for the node's sessions
 *   reap:<node>           string, set NX while one node cleans up after a dead one
 *   own:<key>             string: the node that owns a module's key (NodesApi.owner)
 *   owned:<node>          set   the keys a node owns (forgotten when it dies)
 *   invalidate            pub/sub channel of cache invalidations
 *   session-events        pub/sub channel of changes to the directory (each node's copy follows it)
 */
export class ClusterKeys {
  readonly prefix: string;

  constructor(cluster: string) {
    this.prefix = `svc:${cluster}:`;
  }

  get nodes(): string {
    return `${this.prefix}nodes`;
  }
  alive(node: string): string {
    return `${this.prefix}alive:${node}`;
  }
  get master(): string {
    return `${this.prefix}master`;
  }
  get cookie(): string {
    return `${this.prefix}cookie`;
  }
  sessions(bare: string): string {
    return `${this.prefix}sessions:${bare}`;
  }
  nodeSessions(node: string): string {
    return `${this.prefix}node-sessions:${node}`;
  }
  inbox(node: string): string {
    return `${this.prefix}inbox:${node}`;
  }
  reap(node: string): string {
    return `${this.prefix}reap:${node}`;
  }
  owner(key: string): string {
    return `${this.prefix}own:${key}`;
  }
  owned(node: string): string {
    return `${this.prefix}owned:${node}`;
  }
  get invalidations(): string {
    return `${this.prefix}invalidate`;
  }
  get sessionEvents(): string {
    return `${this.prefix}session-events`;
  }
}
