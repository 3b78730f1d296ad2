/**
 * mod_fail2ban in a cluster: two node processes (`servicectl foreground` with mod_cluster) on one Redis and a
 * shared MariaDB or PostgreSQL. Password guessing over HTTP Basic on one node bans the address on the other
 * too, and `unban_ip` with a mask, called on the other node, frees it on both.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { startClusterNode, nodeApi, type ClusterNodeProcess } from '../support/cluster.js';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig } from '../support/server.js';
import { basicFrom } from './http-basic.js';

const MAX_FAILURES = 3;
const COOKIE = 'fail2ban-cluster-cookie';

/** One SQL database is enough: what is shared here goes through Redis. */
const database = testDatabases().find((d) => d.name !== 'sqlite');

// Without a server database selected (TEST_DATABASES=sqlite) there is no cluster to test.
if (database) describe(`mod_fail2ban in a cluster on ${database.name} and Redis`, function () {
  this.timeout(120_000);
  const cluster = `f2b${randomBytes(4).toString('hex')}`;
  const nodes: ClusterNodeProcess[] = [];

  before(async () => {
    const sql = serverSqlConfig(await database.settings(''));
    for (const index of [0, 1]) {
      nodes[index] = await startClusterNode({
        name: `service@node${index + 1}`,
        cluster,
        cookie: COOKIE,
        sql,
        modules: { mod_http_api: {}, mod_fail2ban: { c2s_max_auth_failures: MAX_FAILURES, c2s_auth_ban_lifetime: 600 } },
      });
    }
    for (const user of ['alice', 'bob', 'carol', 'erin']) expect((await nodeApi(nodes[0]!, 'register', { user, host: 'localhost', password: `${user}-pw` })).status).to.equal(200);
    // Both nodes see each other before the test relies on it.
    const together = async () => (await nodeApi(nodes[0]!, 'list_cluster')).body.length === 2 && (await nodeApi(nodes[1]!, 'list_cluster')).body.length === 2;
    for (let waited = 0; !(await together()); waited += 100) {
      if (waited > 10_000) throw new Error('the nodes did not see each other');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // list_cluster reads the membership in Redis; a node's own list of live nodes (where a ban is sent)
    // follows at its next heartbeats (every 200 ms here).
    await new Promise((resolve) => setTimeout(resolve, 1000));
  });
  after(async () => {
    for (const node of nodes) await node?.proc.cleanup();
    await database.cleanup();
  });

  it('bans on every node an address that guessed on one, and unban_ip on another frees it everywhere', async () => {
    const from = '127.0.0.20';
    const [first, second] = [nodes[0]!, nodes[1]!];
    for (const user of ['alice', 'bob', 'carol']) expect((await basicFrom(from, first.proc.port, user, 'password123')).status, `guess on ${user}`).to.equal(401);
    expect((await basicFrom(from, first.proc.port, 'erin', 'erin-pw')).status, 'banned on the node that counted').to.equal(403);
    // The other node learns the ban over the cluster within moments.
    let elsewhere = await basicFrom(from, second.proc.port, 'erin', 'erin-pw');
    for (let waited = 0; elsewhere.status !== 403 && waited < 5000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      elsewhere = await basicFrom(from, second.proc.port, 'erin', 'erin-pw');
    }
    expect(elsewhere.status, elsewhere.text).to.equal(403);
    expect(Number(elsewhere.retryAfter)).to.be.within(570, 600);
    // Another address is not affected on either node.
    expect((await basicFrom('127.0.0.21', second.proc.port, 'erin', 'erin-pw')).status).to.equal(200);

    const unbanned = await nodeApi(second, 'unban_ip', { address: '127.0.0.16/28' });
    expect(unbanned.status).to.equal(200);
    expect(unbanned.body).to.equal(1);
    for (const node of [first, second]) expect((await basicFrom(from, node.proc.port, 'erin', 'erin-pw')).status, node.name).to.equal(200);
  });
});
