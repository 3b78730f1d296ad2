/**
 * What other modules import of mod_cluster (`@service/mod_cluster/api`): the cluster service's reference and
 * types. mod_admin_extra's get_cookie reads the cookie through it.
 */
import { createServiceRef } from '@service/plugin-api';

export interface ClusterMember {
  readonly name: string;
  /** Its heartbeat is current. */
  readonly alive: boolean;
  /** When it joined (ms since the epoch). */
  readonly started: number;
  readonly version: string;
}

export interface ClusterApi {
  /** This node's name in the cluster. */
  readonly node: string;
  /** The cluster's shared secret (never logged). */
  cookie(): string;
  members(): Promise<ClusterMember[]>;
  /** The node that runs cluster-wide jobs (purges, expiry timers), if any is alive. */
  master(): Promise<string | undefined>;
  /** Whether this node is the master now. */
  isMaster(): Promise<boolean>;
}

export const clusterService = createServiceRef<ClusterApi>({ id: 'mod_cluster.cluster', provider: 'mod_cluster' });
