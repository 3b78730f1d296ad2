/**
 * The nodes of a cluster, as modules see them. A module whose state must live in one place (a group chat
 * room: every occupant's stanzas meet in it) asks which node owns a key and calls its channel there; the
 * owner holds the state, and when it dies the key goes to the first live node that asks for it, which
 * rebuilds the state from storage. Without a cluster module this node is the only one: it owns every key
 * and a call to it runs the channel in place.
 *
 * Channels are the same ones the worker processes call (`channels` of what `start` returns; see
 * ProcessesApi): a node is one process in a cluster, so one registration serves both.
 */
import type { ChannelValue } from './processes.js';

export interface NodesApi {
  /** This node's name (node_name). */
  readonly self: string;
  /** Whether other nodes may exist: a cluster module runs and this node is one of its members. */
  clustered(): boolean;
  /** The nodes whose heartbeat is current, this one included, sorted. */
  live(): readonly string[];
  /**
   * The node that runs cluster-wide jobs (purges, expiry timers): the one set_master chose while it runs,
   * else the longest-running live node; this node when alone.
   */
  master(): Promise<string>;
  /**
   * The live node that owns `key` (a module-prefixed name: `mod_muc:room@service`). A key nobody owns, or
   * whose owner is dead, becomes this node's: exactly one node wins when several ask at once.
   */
  owner(key: string): Promise<string>;
  /** Gives up this node's ownership of `key` (the state is gone): the next node to ask owns it. */
  release(key: string): Promise<void>;
  /**
   * Calls the channel `name` on `node` (this one included) and resolves with its answer. Calls with the
   * same `order` key run on that node one after the other, in the order made here; others side by side.
   * Rejects with a ChannelError when the handler threw ('unreachable' when the node is dead or does not
   * answer within 30 s).
   */
  call(node: string, name: string, payload: ChannelValue, order?: string): Promise<ChannelValue>;
}

/**
 * What a cluster module gives the server (`nodeTransport` of what `start` returns) so that NodesApi spans
 * the cluster: membership, ownership of keys, and calls to the other nodes' channels. A call arriving from
 * another node is run with ProcessesApi.call on this process.
 */
export interface NodeTransport {
  /** Whether this node is a member now (false once it left the cluster). */
  member(): boolean;
  /** The live members, this node included. */
  live(): readonly string[];
  owner(key: string): Promise<string>;
  release(key: string): Promise<void>;
  /** The master node, if a node is alive. */
  master(): Promise<string | undefined>;
  /** A call to another node (never this one). */
  call(node: string, name: string, payload: ChannelValue, order?: string): Promise<ChannelValue>;
}
