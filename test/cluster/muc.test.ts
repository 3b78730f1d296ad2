/**
 * Group chat across a cluster of two node processes sharing MariaDB or PostgreSQL and one Redis: a room
 * lives on the node that first needed it, occupants on both nodes meet in it (presence, messages, the
 * admin commands from either node see one room), slixmpp joins it from the other node, and when the
 * room's node is killed with SIGKILL the room comes back on the surviving node from its stored state: its
 * occupants there are told (332), join again, and find its options and history.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { testDatabases } from '../support/databases.js';
import { startClusterNode, nodeApi, type ClusterNodeProcess } from '../support/cluster.js';
import { serverSqlConfig } from '../support/server.js';
import { loginTo, next, stopAll, xml, type Client, type Element } from '../support/xmpp.js';
import { ExternalClient, killAll } from '../interop/external.js';

const CA = new URL('../fixtures/tls/ca.pem', import.meta.url).pathname;
const SLIXMPP_CLIENT = new URL('../interop/clients/slixmpp_client.py', import.meta.url).pathname;
const SERVICE = 'conference.localhost';
const ROOM = `lounge@${SERVICE}`;
const NS_MUC = 'http://jabber.org/protocol/muc';
const NS_MUC_USER = 'http://jabber.org/protocol/muc#user';

const codes = (s: Element) => (s.getChild('x', NS_MUC_USER)?.getChildren('status') ?? []).map((c) => Number(c.attrs.code));

for (const database of testDatabases().filter((d) => d.name !== 'sqlite')) {
  describe(`group chat across a cluster of two nodes on ${database.name} and Redis`, function () {
    this.timeout(120_000);
    const cluster = `test${randomBytes(4).toString('hex')}`;
    const nodes: ClusterNodeProcess[] = [];
    const clients: Client[] = [];
    const redis = new Redis({ lazyConnect: true });

    const api = (node: number, command: string, args: Record<string, unknown> = {}) => nodeApi(nodes[node]!, command, args);
    const ownerOfRoom = () => redis.get(`svc:${cluster}:own:mod_muc:${ROOM}`);
    const connect = async (node: number, user: string) => {
      const client = await loginTo(`xmpp://127.0.0.1:${nodes[node]!.c2s}`, { user, password: `${user}-pw`, resource: `on-node${node + 1}` });
      clients.push(client);
      await client.send(xml('presence'));
      return client;
    };
    /** Joins the room as `nick` and resolves with the self-presence. */
    const join = async (client: Client, nick: string) => {
      const self = next(client, (s) => s.is('presence') && s.attrs.from === `${ROOM}/${nick}` && (s.attrs.type === 'error' || codes(s).includes(110)), 10_000);
      await client.send(xml('presence', { to: `${ROOM}/${nick}` }, xml('x', { xmlns: NS_MUC }, xml('history', { maxstanzas: '0' }))));
      const presence = await self;
      expect(presence.attrs.type, presence.toString()).to.not.equal('error');
      return presence;
    };
    const groupchat = (body: string) => (s: Element) => s.is('message') && s.attrs.type === 'groupchat' && s.getChildText('body') === body;

    before(async () => {
      await redis.connect();
      const sql = serverSqlConfig(await database.settings(''));
      for (const index of [0, 1]) {
        nodes[index] = await startClusterNode({
          name: `service@muc${index + 1}`,
          cluster,
          cookie: 'muc-cluster-cookie',
          sql,
          modules: { mod_http_api: {}, mod_admin_extra: {}, mod_roster: {}, mod_presence: {}, mod_disco: {}, mod_muc: {}, mod_muc_admin: {} },
        });
      }
      for (const user of ['alice', 'bob', 'slix']) expect((await api(0, 'register', { user, host: 'localhost', password: `${user}-pw` })).status).to.equal(200);
    });
    after(async () => {
      await killAll();
      await stopAll(...clients);
      for (const node of nodes) await node?.proc.cleanup();
      await redis.quit().catch(() => undefined);
      await database.cleanup();
    });

    it('keeps a room on the node that first needed it, and brings occupants of both nodes together in it', async () => {
      const created = await api(1, 'create_room_with_opts', {
        room: 'lounge',
        service: SERVICE,
        host: 'localhost',
        options: [
          { name: 'persistent', value: 'true' },
          { name: 'title', value: 'The Lounge' },
        ],
      });
      expect(created, JSON.stringify(created.body)).to.deep.include({ status: 200, body: 0 });
      expect(await ownerOfRoom()).to.equal('service@muc2');

      const alice = await connect(0, 'alice');
      const bob = await connect(1, 'bob');
      await join(alice, 'Alice');
      const bobSeen = next(alice, (s) => s.is('presence') && s.attrs.from === `${ROOM}/Bob` && s.attrs.type === undefined, 10_000);
      const selfBob = await join(bob, 'Bob');
      await bobSeen;
      expect(selfBob.getChild('x', NS_MUC_USER)?.getChild('item')?.attrs.jid).to.equal('bob@localhost/on-node2');

      const atBob = next(bob, groupchat('hello from node 1'), 10_000);
      const echo = next(alice, groupchat('hello from node 1'), 10_000);
      await alice.send(xml('message', { to: ROOM, type: 'groupchat' }, xml('body', {}, 'hello from node 1')));
      expect((await atBob).attrs.from).to.equal(`${ROOM}/Alice`);
      await echo;
      const atAlice = next(alice, groupchat('hello from node 2'), 10_000);
      await bob.send(xml('message', { to: ROOM, type: 'groupchat' }, xml('body', {}, 'hello from node 2')));
      expect((await atAlice).attrs.from).to.equal(`${ROOM}/Bob`);

      // Both nodes' commands see the one room and its live state.
      for (const node of [0, 1]) {
        expect((await api(node, 'muc_online_rooms', { service: 'global' })).body).to.deep.equal([ROOM]);
        const occupants = (await api(node, 'get_room_occupants', { room: 'lounge', service: SERVICE })).body as any[];
        expect(occupants.map((o) => o.jid).sort()).to.deep.equal(['alice@localhost/on-node1', 'bob@localhost/on-node2']);
        expect((await api(node, 'get_user_rooms', { user: 'alice', host: 'localhost' })).body).to.deep.equal([ROOM]);
        expect((await api(node, 'get_room_options', { room: 'lounge', service: SERVICE })).body).to.deep.include({ name: 'title', value: 'The Lounge' });
      }
      // Node 1's disco#items lists the room that lives on node 2, titled.
      const items = await alice.iqCaller.request(xml('iq', { type: 'get', to: SERVICE }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#items' })));
      expect(items.getChild('query')!.getChildren('item').map((item) => [item.attrs.jid, item.attrs.name])).to.deep.include([ROOM, 'The Lounge']);
      // A command from node 1 changes the room on node 2, whose occupants on both nodes hear it (104).
      const told = next(alice, (s) => s.is('message') && s.attrs.from === ROOM && codes(s).includes(104), 10_000);
      expect((await api(0, 'change_room_option', { room: 'lounge', service: SERVICE, option: 'description', value: 'Across nodes' })).body).to.equal(0);
      await told;
      expect(await ownerOfRoom()).to.equal('service@muc2');
    });

    it('lets slixmpp on node 1 join the room on node 2 and talk with bob there', async () => {
      const [, bob] = clients as [Client, Client];
      const slixJid = `${ROOM}/slix`;
      const arrived = next(bob, (s) => s.is('presence') && s.attrs.from === slixJid && s.attrs.type === undefined, 40_000);
      const fromSlix = next(bob, groupchat('hello from slixmpp on node 1'), 40_000);
      const slix = ExternalClient.spawn(
        'slixmpp',
        ['/usr/bin/python3', SLIXMPP_CLIENT, '--jid', 'slix@localhost/cluster', '--password', 'slix-pw', '--port', String(nodes[0]!.c2s), '--ca', CA, '--wait', '40', '--muc', ROOM, '--nick', 'slix', '--muc-expect', 'hello slix from node 2', '--muc-send', 'hello from slixmpp on node 1'],
        { timeoutMs: 60_000 },
      );
      const joined = await slix.event('the join', (e) => e.event === 'muc_joined', 30_000);
      expect(joined, slix.diagnostics()).to.deep.include({ jid: slixJid, role: 'participant' });
      await arrived.catch((err: Error) => Promise.reject(new Error(`${err.message}\n${slix.diagnostics()}`)));
      await bob.send(xml('message', { to: ROOM, type: 'groupchat' }, xml('body', {}, 'hello slix from node 2')));
      const left = next(bob, (s) => s.is('presence') && s.attrs.from === slixJid && s.attrs.type === 'unavailable', 40_000);
      await fromSlix.catch((err: Error) => Promise.reject(new Error(`${err.message}\n${slix.diagnostics()}`)));
      expect((await slix.exit(40_000)).code, slix.diagnostics()).to.equal(0);
      // Its session on node 1 ended: the room on node 2 lets it go.
      await left;
      const occupants = (await api(0, 'get_room_occupants', { room: 'lounge', service: SERVICE })).body as any[];
      expect(occupants.map((o) => o.jid).sort()).to.deep.equal(['alice@localhost/on-node1', 'bob@localhost/on-node2']);
    });

    it("hands the room to the surviving node from its stored state when the room's node is killed", async () => {
      const [alice] = clients as [Client, Client];
      // alice (node 1) learns that the room went away with its node, as when a service shuts down.
      const out = next(alice, (s) => s.is('presence') && s.attrs.from === `${ROOM}/Alice` && s.attrs.type === 'unavailable', 10_000);
      nodes[1]!.proc.child.kill('SIGKILL');
      await nodes[1]!.proc.exited;
      expect(codes(await out)).to.include(332);
      // Joining again brings the room up on node 1, with what was stored: options, and history for newcomers.
      const history = next(alice, groupchat('hello from node 1'), 10_000);
      const self = next(alice, (s) => s.is('presence') && s.attrs.from === `${ROOM}/Alice` && codes(s).includes(110), 10_000);
      await alice.send(xml('presence', { to: `${ROOM}/Alice` }, xml('x', { xmlns: NS_MUC })));
      await self;
      expect((await history).getChild('delay', 'urn:xmpp:delay'), 'the stored history is replayed').to.not.equal(undefined);
      expect(await ownerOfRoom()).to.equal('service@muc1');
      const options = (await api(0, 'get_room_options', { room: 'lounge', service: SERVICE })).body as any[];
      expect(options).to.deep.include({ name: 'title', value: 'The Lounge' });
      expect(options).to.deep.include({ name: 'description', value: 'Across nodes' });
      // bob went with his node: he is no occupant of the room any more.
      const occupants = (await api(0, 'get_room_occupants', { room: 'lounge', service: SERVICE })).body as any[];
      expect(occupants.map((o) => o.jid)).to.deep.equal(['alice@localhost/on-node1']);
      const echo = next(alice, groupchat('still here'), 10_000);
      await alice.send(xml('message', { to: ROOM, type: 'groupchat' }, xml('body', {}, 'still here')));
      await echo;
      expect((await api(0, 'muc_online_rooms', { service: 'global' })).body).to.deep.equal([ROOM]);
    });
  });
}
