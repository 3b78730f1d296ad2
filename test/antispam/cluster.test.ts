/**
 * mod_antispam in a cluster: two node processes (`servicectl foreground` with mod_cluster) on one Redis and a
 * shared MariaDB or PostgreSQL. A sender caught on one node (by the URL list) is refused at once on the other,
 * and a domain blocked by a command answered by one node is blocked on both.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { nodeApi, startClusterNode, type ClusterNodeProcess } from '../support/cluster.js';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig } from '../support/server.js';
import { loginTo, next, stopAll, xml, type Client, type Element } from '../support/xmpp.js';
import { delivered, refused } from './helpers.js';

const COOKIE = 'antispam-cluster-cookie';
const SPAM_URL = 'https://cheap-pills.example/offer';

/** One SQL database is enough: what is shared here goes through Redis. */
const database = testDatabases().find((d) => d.name !== 'sqlite');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Without a server database selected (TEST_DATABASES=sqlite) there is no cluster to test.
if (database) describe(`mod_antispam in a cluster on ${database.name} and Redis`, function () {
  this.timeout(120_000);
  const cluster = `as${randomBytes(4).toString('hex')}`;
  const nodes: ClusterNodeProcess[] = [];
  let dir: string;
  let alice: Client; // on node 1
  let mallory1: Client; // mallory@localhost on node 1
  let mallory2: Client; // mallory@localhost on node 2

  const api = async (node: ClusterNodeProcess, command: string, args: Record<string, unknown>) => {
    const res = await nodeApi(node, command, args);
    expect(res.status, `${command} on ${node.name}: ${JSON.stringify(res.body)}`).to.equal(200);
    return res.body;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'antispam-cluster-'));
    await writeFile(join(dir, 'urls.txt'), `${SPAM_URL}\n`);
    const sql = serverSqlConfig(await database.settings(''));
    for (const index of [0, 1]) {
      nodes[index] = await startClusterNode({
        name: `service@node${index + 1}`,
        cluster,
        cookie: COOKIE,
        sql,
        modules: { mod_http_api: {}, mod_roster: {}, mod_presence: {}, mod_antispam: { spam_urls_file: join(dir, 'urls.txt') } },
      });
    }
    const together = async () => (await nodeApi(nodes[0]!, 'list_cluster')).body.length === 2 && (await nodeApi(nodes[1]!, 'list_cluster')).body.length === 2;
    for (let waited = 0; !(await together()); waited += 100) {
      if (waited > 10_000) throw new Error('the nodes did not see each other');
      await sleep(100);
    }
    // Each node's own list of live nodes (where changes are sent) follows at its next heartbeats.
    await sleep(1000);
    for (const user of ['alice', 'mallory']) await api(nodes[0]!, 'register', { user, host: 'localhost', password: `${user}-pw` });
    alice = await loginTo(`xmpp://127.0.0.1:${nodes[0]!.c2s}`, { user: 'alice', password: 'alice-pw', resource: 'desk' });
    mallory1 = await loginTo(`xmpp://127.0.0.1:${nodes[0]!.c2s}`, { user: 'mallory', password: 'mallory-pw', resource: 'one' });
    mallory2 = await loginTo(`xmpp://127.0.0.1:${nodes[1]!.c2s}`, { user: 'mallory', password: 'mallory-pw', resource: 'two' });
    for (const client of [alice, mallory1, mallory2]) await client.send(xml('presence'));
    // Until node 2 sees alice's session, it would not deliver to her: wait until a message gets through.
    const until = Date.now() + 10_000;
    for (let i = 0; ; i++) {
      try {
        await delivered(alice, mallory2, `warm-up ${i}`, 500);
        break;
      } catch (err) {
        if (Date.now() > until) throw err;
      }
    }
  });
  after(async () => {
    await stopAll(alice, mallory1, mallory2);
    for (const node of nodes) await node?.proc.cleanup();
    await database.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses on node 1 a sender caught on node 2', async () => {
    await delivered(alice, mallory1, 'hello from node 1');
    await refused(mallory2, `buy now ${SPAM_URL}`);
    await refused(mallory1, 'now from node 1');
    for (const node of nodes) expect((await api(node, 'get_spam_filter_cache', { host: 'localhost' })).map((e: any) => e.jid), node.name).to.deep.equal(['mallory@localhost']);
    expect(await api(nodes[0]!, 'drop_from_spam_filter_cache', { host: 'localhost', jid: 'mallory@localhost' })).to.equal('mallory@localhost removed from cache');
    await delivered(alice, mallory2, 'forgiven on 2');
    await delivered(alice, mallory1, 'forgiven on 1');
  });

  it('blocks on both nodes a domain blocked through one', async () => {
    expect(await api(nodes[1]!, 'add_blocked_domain', { host: 'localhost', domain: 'spam.example.net' })).to.equal('spam.example.net added to blocked domains');
    for (const node of nodes) expect(await api(node, 'get_blocked_domains', { host: 'localhost' }), node.name).to.deep.equal(['spam.example.net']);
    await api(nodes[0]!, 'remove_blocked_domain', { host: 'localhost', domain: 'spam.example.net' });
    for (const node of nodes) expect(await api(node, 'get_blocked_domains', { host: 'localhost' }), node.name).to.deep.equal([]);
  });
});
