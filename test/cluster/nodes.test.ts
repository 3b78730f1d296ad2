/**
 * A cluster of three node processes (`servicectl foreground`) on loopback, sharing MariaDB or PostgreSQL
 * and one Redis, with real clients on different nodes: membership, chat to full and bare JIDs across nodes,
 * presence, roster pushes, carbons and offline delivery across nodes, stream management resumption on
 * another node, the session commands counting and acting cluster-wide, caches forgotten everywhere, the
 * cookie, a node killed with SIGKILL while messages flow (the directory forgets it within the heartbeat
 * timeout, the others keep serving, and no acknowledged message is lost), and a node leaving.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { testDatabases } from '../support/databases.js';
import { startClusterNode, nodeApi, type ClusterNodeProcess } from '../support/cluster.js';
import { request, serverSqlConfig, type RawConfig } from '../support/server.js';
import { expectChatBothWays, expectPingAcross, loginTo, next, stopAll, subscribe, xml, type Client } from '../support/xmpp.js';
import { ExternalClient, killAll } from '../interop/external.js';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { Redis } from 'ioredis';

const CA = new URL('../fixtures/tls/ca.pem', import.meta.url).pathname;
const SLIXMPP_CLIENT = new URL('../interop/clients/slixmpp_client.py', import.meta.url).pathname;

const COOKIE = 'cluster-test-cookie';
const NS_SM = 'urn:xmpp:sm:3';

for (const database of testDatabases().filter((d) => d.name !== 'sqlite')) {
  describe(`a cluster of node processes on ${database.name} and Redis`, function () {
    this.timeout(120_000);
    const cluster = `test${randomBytes(4).toString('hex')}`;
    const nodes: ClusterNodeProcess[] = [];
    const clients: Client[] = [];

    const api = (node: number, command: string, args: Record<string, unknown> = {}) => nodeApi(nodes[node]!, command, args);
    const startNode = async (index: number, sql: RawConfig) => {
      nodes[index] = await startClusterNode({
        name: `service@node${index + 1}`,
        cluster,
        cookie: COOKIE,
        sql,
        extra: (config) => ({
          oauth_access: 'all',
          api_permissions: { ...(config.api_permissions as object), 'token holders': { who: { oauth: { scope: 'status' } }, what: ['status'] } },
        }),
        modules: {
          mod_http_api: {},
          mod_admin_extra: {},
          mod_roster: {},
          mod_presence: {},
          mod_offline: {},
          mod_private: {},
          mod_privacy: {},
          mod_carboncopy: {},
          mod_stream_mgmt: {},
          mod_blocking: {},
          mod_shared_roster: {},
        },
      });
    };
    /**
     * Logs a client in on a node and waits until the other running nodes see its session: a node learns of
     * another node's sessions from its announcements, within milliseconds (docs/cluster.md).
     */
    const connect = async (node: number, user: string) => {
      const client = await loginTo(`xmpp://127.0.0.1:${nodes[node]!.c2s}`, { user, password: `${user}-pw` });
      clients.push(client);
      const full = String((client as any).jid);
      for (const [other] of nodes.entries()) {
        if (other === node || nodes[other]!.proc.child.exitCode !== null || nodes[other]!.proc.child.signalCode !== null) continue;
        const deadline = Date.now() + 2000;
        while (!((await api(other, 'connected_users')).body as string[]).includes(full)) {
          if (Date.now() > deadline) throw new Error(`node ${other + 1} does not see ${full} 2 s after it bound`);
          await new Promise((r) => setTimeout(r, 10));
        }
      }
      return client;
    };

    /** Waits until every running node's connected_users_info says the session `full` is on `node`. */
    const seenOn = async (full: string, node: string) => {
      for (const [index, other] of nodes.entries()) {
        if (other!.proc.child.exitCode !== null || other!.proc.child.signalCode !== null) continue;
        const deadline = Date.now() + 3000;
        for (;;) {
          const info = ((await api(index, 'connected_users_info')).body as any[]).find((s) => s.jid === full);
          if (info?.node === node) break;
          if (Date.now() > deadline) throw new Error(`node ${index + 1} does not see ${full} on ${node} (it says ${JSON.stringify(info)})`);
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    };
    /** A raw client with stream management and resumption enabled, available; the id to resume with. */
    const managed = async (node: number, user: string, resource: string) => {
      const peer = await RawXmppPeer.connect(nodes[node]!.c2s);
      await peer.login(user, `${user}-pw`, { resource });
      peer.write(`<enable xmlns='${NS_SM}' resume='true' max='30'/>`);
      const id = (await peer.waitFor(/<enabled\b[^>]*\bid=['"]([^'"]+)['"]/))[1]!;
      peer.write('<presence/>');
      await peer.waitFor(new RegExp(`<presence\\b[^>]*from=['"]${user}@localhost/${resource}['"]`));
      await seenOn(`${user}@localhost/${resource}`, nodes[node]!.name);
      return { peer, id };
    };

    let sql: RawConfig;

    before(async () => {
      sql = serverSqlConfig(await database.settings(''));
      await Promise.all([0, 1, 2].map((index) => startNode(index, sql)));
      for (const user of ['alice', 'bob', 'carol', 'dave', 'slix', 'erin', 'frank']) expect((await api(0, 'register', { user, host: 'localhost', password: `${user}-pw` })).status).to.equal(200);
    });
    after(async () => {
      await killAll();
      await stopAll(...clients);
      for (const node of nodes) await node?.proc.cleanup();
      await database.cleanup();
    });

    it('lists the three nodes from every node, with one master', async () => {
      for (const node of [0, 1, 2]) expect((await api(node, 'list_cluster')).body).to.deep.equal(['service@node1', 'service@node2', 'service@node3']);
      const detailed = (await api(1, 'list_cluster_detailed')).body;
      const master = (await api(1, 'get_master')).body;
      expect(detailed.map((n: any) => [n.name, n.running, n.master_node])).to.deep.equal([
        ['service@node1', 'true', master],
        ['service@node2', 'true', master],
        ['service@node3', 'true', master],
      ]);
      for (const node of [0, 2]) expect((await api(node, 'get_master')).body).to.equal(master);
    });

    it('delivers chat across nodes, to a full JID and to a bare JID', async () => {
      const alice = await connect(0, 'alice');
      const bob = await connect(1, 'bob');
      await alice.send(xml('presence'));
      await bob.send(xml('presence'));
      await expectChatBothWays(alice, 'alice@localhost', bob);
    });

    it('carries chat between clients nobody here wrote: slixmpp on node 2 and @xmpp/client on node 1', async () => {
      const [alice] = clients as [Client];
      const fromSlix = next(alice, (s) => s.is('message') && s.getChildText('body') === 'hello from slixmpp on node 2', 30_000);
      const slix = ExternalClient.spawn(
        'slixmpp',
        ['/usr/bin/python3', SLIXMPP_CLIENT, '--jid', 'slix@localhost/cluster', '--port', String(nodes[1]!.c2s), '--ca', CA, '--password', 'slix-pw', '--peer', 'alice@localhost', '--send', 'hello from slixmpp on node 2'],
        { timeoutMs: 40_000 },
      );
      const message = await fromSlix.catch((err: Error) => Promise.reject(new Error(`${err.message}\n${slix.diagnostics('alice got nothing')}`)));
      expect(message.attrs.from).to.equal('slix@localhost/cluster');
      await alice.send(xml('message', { to: message.attrs.from, type: 'chat' }, xml('body', {}, 'hello back across nodes')));
      expect((await slix.exit()).code, slix.diagnostics()).to.equal(0);
      const received = await slix.event('received', (e) => e.event === 'received');
      expect(received, slix.diagnostics()).to.deep.include({ body: 'hello back across nodes' });
    });

    it('answers IQs across nodes and bounces one to a resource that is not there', async () => {
      const [alice, bob] = clients as [Client, Client];
      await expectPingAcross(alice, bob, 'bob@localhost/nowhere');
    });

    it('carries presence subscriptions, roster pushes and presence broadcasts across nodes', async () => {
      const [alice, bob] = clients as [Client, Client];
      // alice (node 1) subscribes to bob (node 2) and the other way round: both get roster pushes and presence.
      // Roster pushes go to interested resources (RFC 6121 §2.1.6): alice asks for her roster first.
      await alice.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: 'jabber:iq:roster' })));
      const pushToAlice = next(alice, (s) => s.is('iq') && s.attrs.type === 'set' && s.getChild('query', 'jabber:iq:roster')?.getChild('item')?.attrs.jid === 'bob@localhost');
      await subscribe(alice, 'alice@localhost', bob, 'bob@localhost').catch((err) => {
        throw new Error(`alice subscribing to bob: ${err.message}`);
      });
      await pushToAlice.catch((err) => {
        throw new Error(`roster push to alice: ${err.message}`);
      });
      await subscribe(bob, 'bob@localhost', alice, 'alice@localhost').catch((err) => {
        throw new Error(`bob subscribing to alice: ${err.message}`);
      });
      const away = next(alice, (s) => s.is('presence') && s.attrs.from === String((bob as any).jid) && s.getChildText('show') === 'away');
      await bob.send(xml('presence', {}, xml('show', {}, 'away')));
      await away;
    });

    it('sends carbons of a message to the resources of the account on other nodes', async () => {
      const [alice, bob] = clients as [Client, Client];
      const alice2 = await connect(1, 'alice');
      clients.splice(2, 0); // (kept in clients for cleanup by connect)
      for (const c of [alice, alice2]) await c.iqCaller.request(xml('iq', { type: 'set' }, xml('enable', { xmlns: 'urn:xmpp:carbons:2' })));
      await alice2.send(xml('presence', { }, xml('priority', {}, '-1')));
      const carbon = next(alice2, (s) => s.is('message') && s.getChild('received', 'urn:xmpp:carbons:2') !== undefined);
      await bob.send(xml('message', { to: String((alice as any).jid), type: 'chat' }, xml('body', {}, 'carbon me')));
      const forwarded = (await carbon).getChild('received', 'urn:xmpp:carbons:2')!.getChild('forwarded', 'urn:xmpp:forward:0')!.getChild('message')!;
      expect(forwarded.getChildText('body')).to.equal('carbon me');
      await alice2.stop();
    });

    it('delivers on another node what was stored offline on this one', async () => {
      const [alice] = clients as [Client];
      await alice.send(xml('message', { to: 'carol@localhost', type: 'chat' }, xml('body', {}, 'stored for carol')));
      await new Promise((r) => setTimeout(r, 300));
      const carol = await loginTo(`xmpp://127.0.0.1:${nodes[1]!.c2s}`, { user: 'carol', password: 'carol-pw' });
      const stored = next(carol, (s) => s.is('message') && s.getChildText('body') === 'stored for carol');
      await carol.send(xml('presence'));
      await stored;
      await carol.stop();
      await new Promise((r) => setTimeout(r, 300));
    });

    it('counts and lists sessions cluster-wide from every node', async () => {
      for (const node of [0, 1, 2]) {
        expect((await api(node, 'connected_users_number')).body).to.equal(2);
        expect((await api(node, 'stats', { name: 'onlineusers' })).body).to.equal(2);
        expect((await api(node, 'stats', { name: 'onlineusersnode' })).body).to.equal(node === 2 ? 0 : 1);
        expect((await api(node, 'connected_users_info')).body).to.have.length(2);
        expect([...(await api(node, 'connected_users')).body].map((j: string) => j.split('/')[0]).sort()).to.deep.equal(['alice@localhost', 'bob@localhost']);
      }
    });

    it('kicks a user connected to another node', async () => {
      const carol = await connect(1, 'carol');
      const kicked = new Promise<string>((resolve) => {
        carol.on('error', (err: any) => resolve(`${err.condition}: ${err.text}`));
        setTimeout(() => resolve('no stream error after 10 s'), 10_000);
      });
      const res = await api(0, 'kick_user', { user: 'carol', host: 'localhost' });
      expect(res.body).to.equal('Kicked sessions: 1');
      expect(await kicked).to.equal('policy-violation: Kicked by administrator');
      await new Promise((r) => setTimeout(r, 300));
      expect((await api(0, 'connected_users_number')).body).to.equal(2);
    });

    it('resumes on another node a stream-managed session whose connection was lost, and fails cleanly for one that is gone', async () => {
      const [alice] = clients as [Client];
      const erin = 'erin@localhost/phone';
      const { peer, id } = await managed(1, 'erin', 'phone');
      await alice.send(xml('message', { to: erin, type: 'chat', id: 'm1' }, xml('body', {}, 'sent before the cut')));
      await peer.waitFor(/sent before the cut/);
      // The connection drops without a word and without an acknowledgement: node 2 keeps the session, detached.
      peer.destroy();
      await new Promise((r) => setTimeout(r, 300));
      await alice.send(xml('message', { to: erin, type: 'chat', id: 'm2' }, xml('body', {}, 'sent during the cut')));
      await new Promise((r) => setTimeout(r, 200));
      // The client comes back on node 3 and resumes there: everything it had not acknowledged comes again, in order.
      const resumed = await RawXmppPeer.connect(nodes[2]!.c2s);
      await resumed.authenticate('erin', 'erin-pw');
      resumed.write(`<resume xmlns='${NS_SM}' h='0' previd='${id}'/>`);
      const answer = await resumed.waitFor(/<resumed\b[^>]*>|<failed\b[\s\S]*?<\/failed>/);
      expect(answer[0]).to.match(new RegExp(`^<resumed\\b[^>]*previd=['"]${id.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&')}['"]`));
      await resumed.waitFor(/sent before the cut[\s\S]*sent during the cut/);
      // The session is node 3's now, as every node sees it; the same session: same id, same resource.
      await seenOn(erin, 'service@node3');
      expect((await api(0, 'connected_users')).body).to.include(erin);
      // Chat goes on both ways, and stream management counts on from where it was.
      await alice.send(xml('message', { to: erin, type: 'chat', id: 'm3' }, xml('body', {}, 'after the move')));
      await resumed.waitFor(/after the move/);
      const back = next(alice, (s) => s.is('message') && s.getChildText('body') === 'from node 3');
      resumed.write(`<message to='alice@localhost' type='chat' id='m4'><body>from node 3</body></message>`);
      expect((await back).attrs.from).to.equal(erin);
      resumed.write(`<r xmlns='${NS_SM}'/>`);
      // Handled by erin's client so far: its presence on node 2, then this message on node 3.
      await resumed.waitFor(/<a\b[^>]*h=['"]2['"]/);
      // A session that is not there any more (or never was) cannot be resumed, on any node: a clean failure.
      const stranger = await RawXmppPeer.connect(nodes[0]!.c2s);
      await stranger.authenticate('erin', 'erin-pw');
      stranger.write(`<resume xmlns='${NS_SM}' h='0' previd='no-such-session'/>`);
      await stranger.waitFor(/<failed\b[^>]*>[\s\S]*<item-not-found\b/);
      stranger.destroy();
      // erin says goodbye on node 3: her session ends everywhere.
      resumed.write('</stream:stream>');
      const gone = Date.now() + 3000;
      while (((await api(0, 'connected_users')).body as string[]).includes(erin) && Date.now() < gone) await new Promise((r) => setTimeout(r, 50));
      expect((await api(0, 'connected_users')).body).to.not.include(erin);
      resumed.destroy();
    });

    it('replaces the older of two sessions with the same full JID on two nodes', async () => {
      const older = await RawXmppPeer.connect(nodes[0]!.c2s);
      await older.login('alice', 'alice-pw', { resource: 'twin' });
      await seenOn('alice@localhost/twin', 'service@node1');
      const newer = await RawXmppPeer.connect(nodes[2]!.c2s);
      await newer.login('alice', 'alice-pw', { resource: 'twin' });
      expect((await older.streamError()).condition).to.equal('conflict');
      await seenOn('alice@localhost/twin', 'service@node3');
      expect(((await api(0, 'connected_users')).body as string[]).filter((j) => j === 'alice@localhost/twin')).to.have.length(1);
      newer.write('</stream:stream>');
      await newer.waitClosed();
    });

    it('names the node in status', async () => {
      for (const node of [0, 1, 2]) expect((await api(node, 'status')).body).to.match(new RegExp(`^The node service@node${node + 1} is started`));
    });

    it('reconnects a node whose Redis connections drop, logs each change, and goes on serving', async () => {
      const [alice] = clients as [Client];
      const redis = new Redis('redis://127.0.0.1:6379');
      try {
        const list = String(await redis.client('LIST'));
        const ids = list.split('\n').filter((line) => /\bname=service-\w+-service@node3(\s|$)/.test(line)).map((line) => /\bid=(\d+)/.exec(line)![1]!);
        expect(ids, list).to.have.length(3);
        for (const id of ids) await redis.client('KILL', 'ID', id);
      } finally {
        redis.disconnect();
      }
      const deadline = Date.now() + 10_000;
      const logged = () => /redis \(commands\): (disconnected|reconnecting)[\s\S]*redis \(commands\): ready/.test(nodes[2]!.proc.output());
      while (!logged() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(logged(), nodes[2]!.proc.output().slice(-2000)).to.equal(true);
      // Node 3 carries on: a client there chats with alice on node 1, both ways.
      const slix = await connect(2, 'slix');
      const toAlice = next(alice, (s) => s.is('message') && s.getChildText('body') === 'after the cut');
      await slix.send(xml('message', { to: 'alice@localhost', type: 'chat' }, xml('body', {}, 'after the cut')));
      await toAlice;
      const toSlix = next(slix, (s) => s.is('message') && s.getChildText('body') === 'heard you');
      await alice.send(xml('message', { to: String((slix as any).jid), type: 'chat' }, xml('body', {}, 'heard you')));
      await toSlix;
      await slix.stop();
    });

    it('gives the cookie to an administrator, and never writes it in a log', async () => {
      expect((await api(0, 'get_cookie')).body).to.equal(COOKIE);
      for (const node of nodes) expect(node.proc.output()).to.not.include(COOKIE);
    });

    it('forgets a changed password, a revoked token and a lifted ban on every node at once', async () => {
      const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}@localhost:${password}`).toString('base64')}` });
      const call = async (node: number, headers: Record<string, string>) =>
        (await request(`http://127.0.0.1:${nodes[node]!.proc.port}/api/status`, { method: 'POST', headers, body: '{}' })).status;
      /**
       * The other node's answer right after a change: the change's command returns once Redis has the news,
       * which reaches the other node within milliseconds; a stale answer for longer than 500 ms fails.
       */
      const soon = async (node: number, headers: Record<string, string>, expected: number) => {
        const deadline = Date.now() + 500;
        for (;;) {
          const status = await call(node, headers);
          if (status === expected || Date.now() > deadline) return status;
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      // Node 2 verified carol's password (and caches it); node 1 changes it.
      expect(await call(1, basic('carol', 'carol-pw'))).to.equal(200);
      expect((await api(0, 'change_password', { user: 'carol', host: 'localhost', newpass: 'new-pw' })).status).to.equal(200);
      expect(await soon(1, basic('carol', 'carol-pw'), 401)).to.equal(401);
      expect(await call(1, basic('carol', 'new-pw'))).to.equal(200);
      // A token node 2 has looked up is revoked on node 1.
      const issued = (await api(0, 'oauth_issue_token', { jid: 'carol@localhost', ttl: 600, scopes: ['status'] })).body;
      expect(await call(1, { authorization: `Bearer ${issued.token}` })).to.equal(200);
      expect((await api(0, 'oauth_revoke_token', { token: issued.token })).status).to.equal(200);
      expect(await soon(1, { authorization: `Bearer ${issued.token}` }, 401)).to.equal(401);
      // Node 2 knows carol is not banned (cached), and carries a session of hers; node 1 bans her: the
      // session ends and node 2 refuses her password; then node 1 lifts the ban.
      expect(await call(1, basic('carol', 'new-pw'))).to.equal(200);
      const carol = await loginTo(`xmpp://127.0.0.1:${nodes[1]!.c2s}`, { user: 'carol', password: 'new-pw' });
      clients.push(carol);
      await seenOn(String((carol as any).jid), 'service@node2');
      const ended = new Promise<string>((resolve) => {
        carol.on('error', (err: any) => resolve(String(err.condition)));
        setTimeout(() => resolve('no stream error after 10 s'), 10_000);
      });
      expect((await api(0, 'ban_account', { user: 'carol', host: 'localhost', reason: 'spam' })).status).to.equal(200);
      expect(await ended).to.not.equal('no stream error after 10 s');
      expect(await soon(1, basic('carol', 'new-pw'), 401)).to.equal(401);
      expect((await api(0, 'unban_account', { user: 'carol', host: 'localhost' })).status).to.equal(200);
      expect(await soon(1, basic('carol', 'new-pw'), 200)).to.equal(200);
    });

    it('applies a block and a shared roster group made on one node on every node at once', async () => {
      const [alice] = clients as [Client];
      // dave on node 2 writes to alice on node 1: delivered (node 2 now knows alice's empty blocklist).
      const dave = await connect(1, 'dave');
      const first = next(alice, (s) => s.is('message') && s.getChildText('body') === 'before the block');
      await dave.send(xml('message', { to: 'alice@localhost', type: 'chat' }, xml('body', {}, 'before the block')));
      await first;
      // alice blocks dave on node 1; node 2 refuses dave's next message to her at once.
      await alice.iqCaller.request(xml('iq', { type: 'set' }, xml('block', { xmlns: 'urn:xmpp:blocking' }, xml('item', { jid: 'dave@localhost' }))));
      const refused = next(dave, (s) => s.is('message') && s.attrs.type === 'error' && s.attrs.id === 'after-block');
      await dave.send(xml('message', { to: 'alice@localhost', type: 'chat', id: 'after-block' }, xml('body', {}, 'after the block')));
      await refused;
      await alice.iqCaller.request(xml('iq', { type: 'set' }, xml('unblock', { xmlns: 'urn:xmpp:blocking' }, xml('item', { jid: 'dave@localhost' }))));
      // A shared roster group made through node 1 is in the roster dave gets from node 2.
      expect((await api(0, 'srg_create', { group: 'crew', host: 'localhost', label: 'Crew', description: '', display: ['crew'] })).status).to.equal(200);
      for (const user of ['alice', 'dave']) expect((await api(0, 'srg_user_add', { user, host: 'localhost', group: 'crew', grouphost: 'localhost' })).status).to.equal(200);
      const deadline = Date.now() + 2000;
      let jids: string[] = [];
      while (Date.now() < deadline) {
        const roster = await dave.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: 'jabber:iq:roster' })));
        jids = roster.getChild('query')!.getChildren('item').map((item: any) => item.attrs.jid);
        if (jids.includes('alice@localhost')) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(jids).to.include('alice@localhost');
      expect((await api(0, 'srg_delete', { group: 'crew', host: 'localhost' })).status).to.equal(200);
      await dave.stop();
    });

    it('runs a background purge on the master node: started, watched and aborted from any node', async () => {
      expect((await api(0, 'register', { user: 'ivy', host: 'localhost', password: 'ivy-pw' })).status).to.equal(200);
      for (let i = 0; i < 3; i++) expect((await api(1, 'send_message', { type: 'chat', from: 'admin@localhost', to: 'ivy@localhost', subject: '', body: `kept ${i}` })).status).to.equal(200);
      const master = (await api(0, 'get_master')).body as string;
      const other = nodes.findIndex((n) => n.name !== master);
      // One message per batch, 60 a minute: the purge runs for about three seconds.
      expect((await api(other, 'delete_old_messages_batch', { host: 'localhost', days: 0, batch_size: 1, rate: 60 })).body).to.match(/started on localhost$/);
      for (const node of [0, 1, 2]) {
        expect((await api(node, 'delete_old_messages_status', { host: 'localhost' })).body).to.match(/^Operation in progress, deleted [0-3] messages$/);
        expect((await api(node, 'delete_old_messages_batch', { host: 'localhost', days: 0, batch_size: 1, rate: 60 })).status).to.equal(409);
      }
      expect((await api(2 - other, 'abort_delete_old_messages', { host: 'localhost' })).body).to.equal('Operation aborted');
      for (const node of [0, 1, 2]) expect((await api(node, 'delete_old_messages_status', { host: 'localhost' })).body).to.match(/^Operation was aborted after deleting [0-3] messages$/);
    });

    it('removes a node killed with SIGKILL while messages flow: the others keep serving, and no acknowledged message is lost', async () => {
      // alice (node 1) is subscribed to bob (node 2): she is told once that bob went away with his node.
      const [alice, bob] = clients as [Client, Client];
      const bobJid = String((bob as any).jid);
      const unavailable = next(alice, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === bobJid, 10_000);
      // frank (node 3, stream management) sends bob a steady flow; bob's client on node 2 notes what it gets.
      const gotByBob = new Set<string>();
      bob.on('stanza', (s: any) => {
        if (s.is('message') && String(s.attrs.id ?? '').startsWith('flow-')) gotByBob.add(s.attrs.id);
      });
      const { peer: frank } = await managed(2, 'frank', 'sender');
      const TOTAL = 300;
      let started = 0;
      for (let i = 0; i < TOTAL; i++) {
        frank.write(`<message to='bob@localhost' type='chat' id='flow-${i}'><body>flow ${i}</body></message>`);
        if (i === 100) {
          started = Date.now();
          nodes[1]!.proc.child.kill('SIGKILL');
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      // Node 3 acknowledges every one of them (frank's presence, then the flow)…
      frank.write(`<r xmlns='${NS_SM}'/>`);
      await frank.waitFor(new RegExp(`<a\\b[^>]*h=['"]${TOTAL + 1}['"]`), 10_000);
      await nodes[1]!.proc.exited;
      let listed: string[] = [];
      while (Date.now() - started < 5000) {
        listed = (await api(0, 'list_cluster')).body;
        if (listed.length === 2) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(listed).to.deep.equal(['service@node1', 'service@node3']);
      // The dead node's sessions leave the directory once it is cleaned up after (alice and frank remain).
      let count = 3;
      while (Date.now() - started < 8000 && count !== 2) {
        count = (await api(0, 'connected_users_number')).body;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(count).to.equal(2);
      await unavailable;
      // …and each acknowledged message reached bob's client before his node died, or came back to frank as
      // recipient-unavailable, or waits for bob in offline storage (from node 2's unread inbox too).
      // (What node 2 had not read is routed again once it is cleaned up after: wait until it all landed somewhere.)
      const bounced = () => new Set([...frank.all.matchAll(/<message\b(?=[^>]*type=['"]error['"])[^>]*id=['"](flow-\d+)['"]/g)].map((m) => m[1]!));
      const offlineCount = async () => (await api(0, 'get_offline_count', { user: 'bob', host: 'localhost' })).body as number;
      const settled = Date.now() + 5000;
      while (gotByBob.size + bounced().size + (await offlineCount()) < TOTAL && Date.now() < settled) await new Promise((r) => setTimeout(r, 100));
      const bobAgain = await loginTo(`xmpp://127.0.0.1:${nodes[0]!.c2s}`, { user: 'bob', password: 'bob-pw', resource: 'again' });
      clients.push(bobAgain);
      const stored = new Set<string>();
      const storedCount = await offlineCount();
      const allStored = new Promise<void>((resolve) => {
        bobAgain.on('stanza', (s: any) => {
          if (s.is('message') && String(s.attrs.id ?? '').startsWith('flow-')) stored.add(s.attrs.id);
          if (stored.size >= storedCount) resolve();
        });
      });
      await bobAgain.send(xml('presence'));
      if (storedCount > 0) await allStored;
      const bouncedIds = bounced();
      const lost = Array.from({ length: TOTAL }, (_, i) => `flow-${i}`).filter((id) => !gotByBob.has(id) && !bouncedIds.has(id) && !stored.has(id));
      expect(lost, `got ${gotByBob.size}, bounced ${bouncedIds.size}, stored ${stored.size}`).to.deep.equal([]);
      expect(stored.size, 'what node 2 never handed to bob is stored for him').to.be.greaterThan(0);
      // Node 1 still serves alice: a message for bob's old resource (gone with his node) reaches his new one.
      await alice.send(xml('message', { to: bobJid, type: 'chat' }, xml('body', {}, 'while you were gone')));
      const late = next(bobAgain, (s) => s.is('message') && s.getChildText('body') === 'while you were gone');
      await late;
      frank.write('</stream:stream>');
      frank.destroy();
    });

    it('takes a running node out with leave_cluster: it serves alone and is no longer listed', async () => {
      expect((await api(0, 'list_cluster')).body).to.deep.equal(['service@node1', 'service@node3']);
      const dave = await connect(2, 'dave');
      const before = (await api(0, 'connected_users_number')).body as number;
      // Leaving the node that runs the command is for servicectl on it only.
      expect((await api(2, 'leave_cluster', { node: 'service@node3' })).status).to.equal(403);
      expect((await api(0, 'leave_cluster', { node: 'service@node3' })).status).to.equal(200);
      const deadline = Date.now() + 5000;
      let listed: string[] = [];
      while (Date.now() < deadline) {
        listed = (await api(0, 'list_cluster')).body;
        if (listed.length === 1) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(listed).to.deep.equal(['service@node1']);
      expect((await api(0, 'connected_users_number')).body).to.equal(before - 1);
      const alone = await api(2, 'list_cluster');
      expect(alone.status).to.equal(422);
      expect(alone.body.message).to.match(/left the cluster/);
      // It still serves its own client.
      const roster = await dave.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: 'jabber:iq:roster' })));
      expect(roster.attrs.type).to.equal('result');
    });
  });
}
