/**
 * The cluster commands of mod_cluster: membership (list_cluster, list_cluster_detailed, join_cluster,
 * join_cluster_here, leave_cluster) and the master (get_master, set_master). Membership is Redis's: a node
 * is in the cluster whose Redis URL, name and cookie its configuration gives, so joining is configuring
 * (join_cluster checks that the named node is a live member and says so).
 */
import { CommandError, badArgument, defineCommand, failed, notFound, type HandlersFor, type ServerServices } from '@service/plugin-api';
import type { ClusterNode } from './cluster.js';

const nodeArg = { name: 'node', type: 'string', desc: 'A node name, as list_cluster shows it', example: 'service@node2' } as const;

export const clusterCommands = [
  defineCommand({
    name: 'list_cluster',
    tags: ['cluster'],
    desc: 'List running nodes that are part of this cluster',
    longdesc: 'The nodes whose heartbeat is current, by name.',
    args: [],
    result: { name: 'nodes', type: { list: 'string', item: 'node' } },
    examples: [{ args: {}, result: ['service@node1', 'service@node2'] }],
  }),
  defineCommand({
    name: 'list_cluster_detailed',
    tags: ['cluster'],
    desc: 'List nodes (both running and known) and some stats',
    longdesc:
      'Every known node: whether it runs (its heartbeat is current), its status, its online sessions, its processes (the node process: 1 while it runs), its uptime and the master node. ' +
      'Nodes that died are forgotten once another node has cleaned up after them.',
    note: 'added 24.06',
    args: [],
    result: {
      name: 'nodes',
      type: {
        list: {
          object: [
            { name: 'name', type: 'string' },
            { name: 'running', type: 'string' },
            { name: 'status', type: 'string' },
            { name: 'online_users', type: 'integer' },
            { name: 'processes', type: 'integer' },
            { name: 'uptime_seconds', type: 'integer' },
            { name: 'master_node', type: 'string' },
          ],
        },
        item: 'node',
      },
    },
    examples: [{ args: {}, result: [{ name: 'service@node1', running: 'true', status: 'started', online_users: 12, processes: 1, uptime_seconds: 3600, master_node: 'service@node1' }] }],
  }),
  defineCommand({
    name: 'get_master',
    tags: ['cluster'],
    desc: 'Get master node of the clustered components',
    longdesc: 'The node that runs cluster-wide jobs (purges, expiry timers): the one set_master chose while it runs, else the longest-running node. `none` when no node runs.',
    note: 'added 24.06',
    args: [],
    result: { name: 'nodename', type: 'string' },
    examples: [{ args: {}, result: 'service@node1' }],
  }),
  defineCommand({
    name: 'set_master',
    tags: ['cluster'],
    desc: 'Set master node of the clustered components',
    longdesc: 'Makes a running node the master; `self` names this node. 404 when the node is not a running member.',
    args: [{ name: 'nodename', type: 'string', desc: 'A running node, or `self` for this node', example: 'self' }],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { nodename: 'self' }, result: 'Master node set to service@node1' }],
  }),
  defineCommand({
    name: 'join_cluster',
    tags: ['cluster'],
    desc: 'Join our local node into the cluster handled by Node',
    longdesc:
      'A node is in the cluster its configuration names (mod_cluster: redis_url, cluster, cookie): this checks that `node` is a running member of that cluster, which this node has joined at start. ' +
      '404 when `node` is not a running member (then configure this node like it, with the same cookie, and reload).',
    note: 'improved 24.06',
    args: [nodeArg],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { node: 'service@node1' }, result: 'This node (service@node2) is in the cluster of service@node1' }],
  }),
  defineCommand({
    name: 'join_cluster_here',
    tags: ['cluster'],
    desc: 'Join a remote Node here, into our cluster',
    longdesc: 'The same check as join_cluster, from the other side: `node` is a running member of this node\'s cluster. 404 when it is not.',
    note: 'added 24.06',
    args: [nodeArg],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { node: 'service@node2' }, result: 'service@node2 is in the cluster of this node (service@node1)' }],
  }),
  defineCommand({
    name: 'leave_cluster',
    tags: ['cluster'],
    desc: 'Remove and shutdown Node from the running cluster',
    longdesc:
      "Takes a node out of the cluster: its sessions leave the directory, its record and heartbeat go, and it stops routing to and from the other nodes; it keeps serving its own clients alone, and nothing is moved (the SQL data is shared). " +
      'A running node is told to leave; a dead one is cleaned up after. Leaving the node that runs the command is only possible from servicectl on that node (403 elsewhere). ' +
      'It joins again when mod_cluster restarts (reload_config, restart). 404 when the node is not a member.',
    args: [nodeArg],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { node: 'service@node2' }, result: 0 }],
  }),
] as const;

export function clusterHandlers(cluster: ClusterNode, services: ServerServices): HandlersFor<typeof clusterCommands> {
  const member = () => {
    if (!cluster.member) throw failed(`this node (${cluster.node}) left the cluster with leave_cluster; it joins again when mod_cluster restarts`);
  };
  const running = async (node: string) => {
    member();
    const members = await cluster.members();
    if (!members.some((m) => m.name === node && m.alive)) throw notFound(`node ${node} is not a running member of this cluster (running: ${members.filter((m) => m.alive).map((m) => m.name).join(', ') || 'none'})`);
  };
  return {
    list_cluster: async () => (member(), await cluster.members()).filter((m) => m.alive).map((m) => m.name),
    list_cluster_detailed: async () => {
      member();
      const master = (await cluster.master()) ?? 'none';
      const members = await cluster.members();
      const out = [];
      for (const m of members) {
        const own = m.name === cluster.node;
        const online = own ? await localCount(services) : await cluster.directory.countNode(m.name);
        out.push({
          name: m.name,
          running: String(m.alive),
          status: own ? services.server.status : m.alive ? 'started' : 'stopped',
          online_users: online,
          processes: m.alive ? 1 : 0,
          uptime_seconds: m.alive ? Math.max(0, Math.round((Date.now() - m.started) / 1000)) : 0,
          master_node: master,
        });
      }
      return out;
    },
    get_master: async () => (member(), (await cluster.master()) ?? 'none'),
    set_master: async ({ nodename }) => {
      if (!nodename) throw badArgument('nodename', "argument 'nodename' is empty: give a node name or `self`");
      const node = nodename === 'self' ? cluster.node : nodename;
      await running(node);
      await cluster.setMaster(node);
      return `Master node set to ${node}`;
    },
    join_cluster: async ({ node }) => {
      if (node === cluster.node) throw failed(`${node} is this node: name another member`);
      await running(node);
      return `This node (${cluster.node}) is in the cluster of ${node}`;
    },
    leave_cluster: async ({ node }, call) => {
      if (node === cluster.node) {
        if (call.caller.frontend !== 'service_ctl') throw new CommandError('forbidden', `leave_cluster for this node (${node}) runs only from servicectl on it`);
        await cluster.leave();
        return;
      }
      member();
      const target = (await cluster.members()).find((m) => m.name === node);
      if (!target) throw notFound(`node ${node} is not a member of this cluster`);
      await cluster.removeMember(node, target.alive);
    },
    join_cluster_here: async ({ node }) => {
      if (node === cluster.node) throw failed(`${node} is this node: name another member`);
      await running(node);
      return `${node} is in the cluster of this node (${cluster.node})`;
    },
  };
}

async function localCount(services: ServerServices): Promise<number> {
  return (await services.xmpp.sessions.all()).filter((s) => services.xmpp.isLocal(s)).length;
}
