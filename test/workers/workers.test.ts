/**
 * One server as several worker processes on one machine (`workers: 2`), on the embedded SQLite database and
 * with no Redis: `servicectl foreground` forks the workers, which share the listening ports (the primary
 * hands connections out in turn). Clients land on different workers; everything must behave as one server:
 * chat, presence and roster pushes across workers, the session commands counting and kicking everywhere,
 * the conflict rule, caches and login bans shared, group chat rooms (held in worker 1, reached from both), a
 * configuration or log level change applied by every worker, stream management resumption on another worker, a worker killed with SIGKILL (its sessions end,
 * it comes back, the server keeps serving) and servicectl stopping everything.
 *
 * Which worker carries a session is read where an operator reads it: the log line of the login carries the
 * worker's index.
 */
import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import { mkdtemp, readFile, readdir, readlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { freePort, openConfig, spawnServer, SERVICECTL, type ServerProcess } from '../support/process.js';
import { RECORD_MODULES, SERVER_CODE, readLoaded } from '../support/loaded-modules.js';
import { WorkerLogins, bothWorkersServe, twoWorkersConfig } from '../support/worker-logins.js';
import { collect, expectChatBothWays, expectPingAcross, next, stopAll, subscribe, xml, type Client } from '../support/xmpp.js';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { servicectl } from '../support/cli.js';

const NS_SM = 'urn:xmpp:sm:3';

/** A call on a new connection each time: the primary hands each to the next worker. */
function call(port: number, command: string, args: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(args);
    const req = httpRequest({ host: '127.0.0.1', port, path: `/api/${command}`, method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => {
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // Not JSON: kept as text.
        }
        resolve({ status: res.statusCode!, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The child pids of a process (its workers). */
async function childrenOf(pid: number): Promise<number[]> {
  const tasks = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return tasks.trim().split(/\s+/).filter(Boolean).map(Number);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The inodes of the sockets listening on TCP `port` (IPv4 and IPv6), from the kernel's tables. */
async function listeningInodes(port: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const rows = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const row of rows) {
      const fields = row.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT; state 0A is LISTEN; the inode is the tenth field.
      if (fields.length > 9 && fields[3] === '0A' && parseInt(fields[1]!.split(':')[1]!, 16) === port) inodes.add(fields[9]!);
    }
  }
  return inodes;
}

/** How many of the sockets listening on `port` process `pid` holds. */
async function listeningSocketsHeld(pid: number, port: number): Promise<number> {
  const inodes = await listeningInodes(port);
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  let held = 0;
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode && inodes.has(inode)) held++;
  }
  return held;
}

describe('several workers on one machine (workers: 2, SQLite, no Redis)', function () {
  this.timeout(120_000);
  let proc: ServerProcess;
  let c2s: number;
  const logins = new WorkerLogins(() => proc, () => c2s);
  const clients = logins.clients;
  const api = (command: string, args: Record<string, unknown> = {}, headers: Record<string, string> = {}) => call(proc.port, command, args, headers);

  /** Logs `user` in on `worker`, and waits until both workers list the session. */
  const connectOn = async (worker: number, user: string, resource?: string): Promise<Client> => {
    const client = await logins.client(worker, user, resource);
    await seenEverywhere(String((client as any).jid));
    return client;
  };
  const rawOn = (worker: number, user: string, resource: string) => logins.raw(worker, user, resource);
  /** Waits until both workers list the session (they learn of each other's within milliseconds). */
  const seenEverywhere = async (full: string, present = true) => {
    const deadline = Date.now() + 3000;
    for (let seen = 0; seen < 4; ) {
      const listed = ((await api('connected_users')).body as string[]).includes(full);
      if (listed === present) seen++;
      else if (Date.now() > deadline) throw new Error(`${full} is ${present ? 'not ' : ''}listed by every worker 3 s after`);
      else await sleep(20);
    }
  };

  before(async () => {
    c2s = await freePort();
    proc = await spawnServer((port) => {
      return twoWorkersConfig(port, c2s, {
        login_failures_per_address: 6,
        login_ban_lifetime: 60,
        api_permissions: {
        'loopback admin': { who: { acl: 'loopback' }, what: '*' },
        users: { who: 'all', from: ['mod_http_api'], what: ['get_roster'] },
        },
        modules: {
        mod_http_api: {},
        mod_admin_extra: {},
        mod_roster: {},
        mod_presence: {},
        mod_offline: {},
        mod_stream_mgmt: {},
        mod_version: {},
        mod_ping: {},
        mod_disco: {},
        mod_muc: {},
        mod_muc_admin: {},
        mod_shared_roster: {},
        },
      });
    });
    // Worker 1 answers first; the server serves once the primary says every worker does.
    await bothWorkersServe(proc);
    for (const user of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'gina', 'hugo']) expect((await api('register', { user, host: 'localhost', password: `${user}-pw` })).status).to.equal(200);
  });
  after(async () => {
    await stopAll(...clients);
    await proc?.cleanup();
  });

  it('runs a primary and two workers that share the HTTP port, each serving requests', async () => {
    const workers = await childrenOf(proc.child.pid!);
    expect(workers).to.have.length(2);
    // servicectl says the server runs once every worker serves.
    const status = await servicectl(proc.configFile, 'status');
    expect(status.code, status.stdout + status.stderr).to.equal(0);
    const cpu = async (pid: number) => {
      const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
      return Number(fields[11]) + Number(fields[12]);
    };
    const before = await Promise.all(workers.map(cpu));
    for (let i = 0; i < 300; i++) expect((await api('registered_users', { host: 'localhost' })).status).to.equal(200);
    const after = await Promise.all(workers.map(cpu));
    // Both workers spent CPU on the 300 requests: the port is shared, not served by one of them.
    for (const [i] of workers.entries()) expect(after[i]! - before[i]!, `CPU ticks of worker ${i + 1}`).to.be.greaterThan(0);
  });

  it('lets each worker accept its own XMPP clients (a socket of its own on the c2s port, none in the primary)', async function () {
    const workers = await childrenOf(proc.child.pid!);
    // Where the native addon is not built (not Linux), the primary shares the port out instead.
    const { listenReusePort } = await import('@service/reuseport');
    if (!listenReusePort) this.skip();
    expect(await listeningSocketsHeld(proc.child.pid!, c2s), 'c2s sockets of the primary').to.equal(0);
    for (const [i, pid] of workers.entries()) expect(await listeningSocketsHeld(pid, c2s), `c2s sockets of worker ${i + 1}`).to.equal(1);
    // The HTTP port stays the primary's to share out (few keep-alive connections: round robin keeps them even).
    expect(await listeningSocketsHeld(proc.child.pid!, proc.port), 'HTTP sockets of the primary').to.equal(1);
    // The kernel spreads new connections over both sockets: 16 logins land on both workers.
    const from = proc.output().length;
    const peers = await Promise.all(Array.from({ length: 16 }, async () => {
      const peer = await RawXmppPeer.connect(c2s);
      await peer.authenticate('hugo', 'hugo-pw');
      return peer;
    }));
    const landed = new Set<number>();
    for (const line of proc.output().slice(from).split('\n')) if (line.includes('"authenticated"') && line.includes('"user":"hugo@localhost"')) landed.add((JSON.parse(line) as { worker: number }).worker);
    for (const peer of peers) peer.destroy();
    expect([...landed].sort()).to.deep.equal([1, 2]);
  });

  it('delivers chat, IQs and presence between clients on different workers', async () => {
    const alice = await connectOn(1, 'alice');
    const bob = await connectOn(2, 'bob');
    await alice.send(xml('presence'));
    await bob.send(xml('presence'));
    await expectChatBothWays(alice, 'alice@localhost', bob);
    await expectPingAcross(alice, bob, 'bob@localhost/nowhere');
    // Subscriptions both ways: roster pushes and presence cross the workers.
    await alice.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: 'jabber:iq:roster' })));
    const push = next(alice, (s) => s.is('iq') && s.attrs.type === 'set' && s.getChild('query', 'jabber:iq:roster')?.getChild('item')?.attrs.jid === 'bob@localhost');
    await subscribe(alice, 'alice@localhost', bob, 'bob@localhost');
    await push;
    await subscribe(bob, 'bob@localhost', alice, 'alice@localhost');
    const away = next(alice, (s) => s.is('presence') && s.attrs.from === String((bob as any).jid) && s.getChildText('show') === 'away');
    await bob.send(xml('presence', {}, xml('show', {}, 'away')));
    await away;
  });

  it('stops presence to a contact at once when the subscription ends on the other worker (the roster rows each worker keeps)', async () => {
    for (const user of ['ivan', 'judy']) expect((await api('register', { user, host: 'localhost', password: `${user}-pw` })).status).to.equal(200);
    const ivan = await connectOn(1, 'ivan');
    const judy = await connectOn(2, 'judy');
    await judy.send(xml('presence'));
    // Ivan's broadcast reads his roster rows on worker 1, which keeps them.
    await ivan.send(xml('presence'));
    await subscribe(judy, 'judy@localhost', ivan, 'ivan@localhost');
    const ivanJid = String((ivan as any).jid);
    const away = next(judy, (s) => s.is('presence') && s.attrs.from === ivanJid && s.getChildText('show') === 'away');
    await ivan.send(xml('presence', {}, xml('show', {}, 'away')));
    await away;
    // Judy, on worker 2, unsubscribes: Ivan's row changes there, worker 1 must drop what it kept, and Ivan's
    // client, which asked for the roster on worker 1, gets the push made on worker 2.
    const pushed = next(ivan, (s) => s.is('iq') && s.attrs.type === 'set' && s.getChild('query', 'jabber:iq:roster')?.getChild('item')?.attrs.subscription === 'none');
    await judy.send(xml('presence', { to: 'ivan@localhost', type: 'unsubscribe' }));
    await pushed;
    const seen = collect(judy);
    const marker = next(judy, (s) => s.is('message') && s.getChildText('body') === 'after dnd');
    await ivan.send(xml('presence', {}, xml('show', {}, 'dnd')));
    await ivan.send(xml('message', { to: 'judy@localhost', type: 'chat' }, xml('body', {}, 'after dnd')));
    await marker;
    // Both went from worker 1 to worker 2 over one socket, in order: the message came, the presence did not.
    expect(seen.filter((s) => s.is('presence') && s.getChildText('show') === 'dnd').map(String)).to.deep.equal([]);
    await stopAll(ivan, judy);
  });

  it('keeps group chat rooms in worker 1: occupants on both workers chat, and the MUC commands answer alike from any worker', async () => {
    const MUC = 'http://jabber.org/protocol/muc';
    const room = 'lobby@conference.localhost';
    const gina = await connectOn(2, 'gina');
    const hugo = await connectOn(1, 'hugo');
    const selfPresence = (client: Client, nick: string) =>
      next(client, (s) => s.is('presence') && s.attrs.from === `${room}/${nick}` && (s.getChild('x', `${MUC}#user`)?.getChildren('status') ?? []).some((st: any) => st.attrs.code === '110'));
    // gina (worker 2) creates the room as an instant room: her stanzas cross to worker 1, which answers her.
    let joined = selfPresence(gina, 'gina');
    await gina.send(xml('presence', { to: `${room}/gina` }, xml('x', { xmlns: MUC })));
    await joined;
    await gina.iqCaller.request(xml('iq', { type: 'set', to: room }, xml('query', { xmlns: `${MUC}#owner` }, xml('x', { xmlns: 'jabber:x:data', type: 'submit' }))));
    const seen = next(gina, (s) => s.is('presence') && s.attrs.from === `${room}/hugo`);
    joined = selfPresence(hugo, 'hugo');
    await hugo.send(xml('presence', { to: `${room}/hugo` }, xml('x', { xmlns: MUC })));
    await joined;
    await seen;
    // A message from worker 1's occupant reaches worker 2's, and back.
    const toGina = next(gina, (s) => s.is('message') && s.attrs.type === 'groupchat' && s.getChildText('body') === 'hi from worker 1');
    await hugo.send(xml('message', { to: room, type: 'groupchat' }, xml('body', {}, 'hi from worker 1')));
    expect((await toGina).attrs.from).to.equal(`${room}/hugo`);
    const toHugo = next(hugo, (s) => s.is('message') && s.attrs.type === 'groupchat' && s.getChildText('body') === 'hi from worker 2');
    await gina.send(xml('message', { to: room, type: 'groupchat' }, xml('body', {}, 'hi from worker 2')));
    expect((await toHugo).attrs.from).to.equal(`${room}/gina`);
    // Each call lands on the next worker: every answer is the one room's.
    for (let i = 0; i < 4; i++) {
      const occupants = (await api('get_room_occupants', { room: 'lobby', service: 'conference.localhost' })).body as Array<{ nick: string }>;
      expect(occupants.map((o) => o.nick).sort()).to.deep.equal(['gina', 'hugo']);
      expect((await api('get_room_occupants_number', { room: 'lobby', service: 'conference.localhost' })).body).to.equal(2);
    }
    expect((await api('create_room', { room: 'made', service: 'conference.localhost', host: 'localhost' })).body).to.equal(0);
    for (let i = 0; i < 4; i++) {
      expect((await api('muc_online_rooms', { service: 'global' })).body).to.include.members([room, 'made@conference.localhost']);
      // A room error thrown in worker 1 is the same error from either worker.
      const missing = await api('get_room_options', { room: 'nowhere', service: 'conference.localhost' });
      expect(missing.status).to.equal(404);
    }
    // gina's session ends on worker 2: the room in worker 1 hears of it and she leaves it.
    const left = next(hugo, (s) => s.is('presence') && s.attrs.from === `${room}/gina` && s.attrs.type === 'unavailable');
    const ginaJid = String((gina as any).jid);
    await gina.stop();
    await left;
    await seenEverywhere(ginaJid, false);
    expect(((await api('get_room_occupants', { room: 'lobby', service: 'conference.localhost' })).body as Array<{ nick: string }>).map((o) => o.nick)).to.deep.equal(['hugo']);
    const hugoJid = String((hugo as any).jid);
    await hugo.stop();
    await seenEverywhere(hugoJid, false);
  });

  it('counts, lists and kicks sessions of every worker from any worker', async () => {
    for (let i = 0; i < 4; i++) {
      expect((await api('connected_users_number')).body).to.equal(2);
      expect([...(await api('connected_users')).body].map((j: string) => j.split('/')[0]).sort()).to.deep.equal(['alice@localhost', 'bob@localhost']);
      const info = (await api('connected_users_info')).body as any[];
      // One server: every session is on this node, whichever worker carries it.
      expect(info.map((s) => s.node)).to.deep.equal(['service@localhost', 'service@localhost']);
    }
    const carol = await connectOn(2, 'carol');
    const kicked = new Promise<string>((resolve) => {
      carol.on('error', (err: any) => resolve(`${err.condition}: ${err.text}`));
      setTimeout(() => resolve('no stream error after 10 s'), 10_000);
    });
    // Asked until worker 1 answers it would not prove much: either worker kicks on the other.
    expect((await api('kick_user', { user: 'carol', host: 'localhost' })).body).to.equal('Kicked sessions: 1');
    expect(await kicked).to.equal('policy-violation: Kicked by administrator');
    await seenEverywhere(String((carol as any).jid), false);
  });

  it('runs a background purge in worker 1: its status and abort answer alike from either worker', async () => {
    expect((await api('register', { user: 'ivy', host: 'localhost', password: 'ivy-pw' })).status).to.equal(200);
    for (let i = 0; i < 3; i++) {
      const sent = await api('send_message', { type: 'chat', from: 'admin@localhost', to: 'ivy@localhost', subject: '', body: `kept for ivy ${i}` });
      expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    }
    expect((await api('get_offline_count', { user: 'ivy', host: 'localhost' })).body).to.equal(3);
    // One message per batch, 60 a minute: a second between batches, so the purge runs for two seconds.
    expect((await api('delete_old_messages_batch', { host: 'localhost', days: 0, batch_size: 1, rate: 60 })).body).to.match(/started on localhost$/);
    // Asked several times, the requests land on both workers: each answer is about the one purge.
    for (let i = 0; i < 6; i++) {
      expect((await api('delete_old_messages_status', { host: 'localhost' })).body).to.match(/^Operation in progress, deleted [0-3] messages$/);
      const again = await api('delete_old_messages_batch', { host: 'localhost', days: 0, batch_size: 1, rate: 60 });
      expect(again.status).to.equal(409);
    }
    expect((await api('abort_delete_old_messages', { host: 'localhost' })).body).to.equal('Operation aborted');
    for (let i = 0; i < 6; i++) {
      expect((await api('delete_old_messages_status', { host: 'localhost' })).body).to.match(/^Operation was aborted after deleting [0-3] messages$/);
      expect((await api('abort_delete_old_messages', { host: 'localhost' })).body).to.equal('No task running');
    }
  });

  it('replaces the older of two sessions with the same full JID on two workers', async () => {
    const older = await rawOn(1, 'dave', 'twin');
    await seenEverywhere('dave@localhost/twin');
    const newer = await rawOn(2, 'dave', 'twin');
    expect((await older.streamError()).condition).to.equal('conflict');
    await sleep(200);
    for (let i = 0; i < 4; i++) expect(((await api('connected_users')).body as string[]).filter((j) => j === 'dave@localhost/twin')).to.have.length(1);
    newer.write('</stream:stream>');
    await newer.waitClosed();
    older.destroy();
  });

  it('resumes on one worker a stream-managed session the other carried', async () => {
    const [alice] = clients as [Client];
    const erin = 'erin@localhost/phone';
    const peer = await rawOn(1, 'erin', 'phone');
    peer.write(`<enable xmlns='${NS_SM}' resume='true' max='30'/>`);
    const id = (await peer.waitFor(/<enabled\b[^>]*\bid=['"]([^'"]+)['"]/))[1]!;
    peer.write('<presence/>');
    await peer.waitFor(/<presence\b[^>]*from=['"]erin@localhost\/phone['"]/);
    await seenEverywhere(erin);
    await alice.send(xml('message', { to: erin, type: 'chat' }, xml('body', {}, 'sent before the cut')));
    await peer.waitFor(/sent before the cut/);
    peer.destroy();
    await sleep(300);
    await alice.send(xml('message', { to: erin, type: 'chat' }, xml('body', {}, 'sent during the cut')));
    await sleep(200);
    // Back on worker 2: what was not acknowledged comes again, in order, and chat goes on.
    const resumed = await logins.authenticated(2, 'erin');
    resumed.write(`<resume xmlns='${NS_SM}' h='0' previd='${id}'/>`);
    const answer = await resumed.waitFor(/<resumed\b[^>]*>|<failed\b[\s\S]*?<\/failed>/);
    expect(answer[0]).to.match(/^<resumed\b/);
    await resumed.waitFor(/sent before the cut[\s\S]*sent during the cut/);
    await alice.send(xml('message', { to: erin, type: 'chat' }, xml('body', {}, 'after the move')));
    await resumed.waitFor(/after the move/);
    const back = next(alice, (s) => s.is('message') && s.getChildText('body') === 'from worker 2');
    resumed.write(`<message to='alice@localhost' type='chat'><body>from worker 2</body></message>`);
    expect((await back).attrs.from).to.equal(erin);
    resumed.write('</stream:stream>');
    await seenEverywhere(erin, false);
    resumed.destroy();
  });

  it('writes from both workers at once to the embedded SQLite without a failure', async () => {
    // Roster changes are transactions (an item and its groups): 200 at once, spread over both workers.
    const calls = Array.from({ length: 200 }, (_, i) =>
      api('add_rosteritem', { localuser: 'frank', localhost: 'localhost', user: `contact${i}`, host: 'example.net', nick: `c${i}`, groups: [`g${i % 7}`, 'all'], subs: 'both' }),
    );
    const results = await Promise.all(calls);
    expect(results.filter((r) => r.status !== 200).map((r) => r.body)).to.deep.equal([]);
    const removals = await Promise.all(Array.from({ length: 200 }, (_, i) => api('delete_rosteritem', { localuser: 'frank', localhost: 'localhost', user: `contact${i}`, host: 'example.net' })));
    expect(removals.filter((r) => r.status !== 200).map((r) => r.body)).to.deep.equal([]);
    expect((await api('get_roster', { user: 'frank', host: 'localhost' })).body).to.deep.equal([]);
  });

  it('shows an account registered through either worker in the @all@ group\'s rosters of both at once', async () => {
    const contactsOf = async (user: string) => ((await api('get_roster', { user, host: 'localhost' })).body as Array<{ jid: string }>).map((item) => item.jid);
    // Without an @all@ group, a new account is in nobody's roster.
    expect((await api('register', { user: 'una', host: 'localhost', password: 'una-pw' })).status).to.equal(200);
    for (let i = 0; i < 4; i++) expect(await contactsOf('gina'), `call ${i}`).to.not.include('una@localhost');
    expect((await api('srg_create', { group: 'everyone', host: 'localhost', label: 'Everyone', description: '', display: ['everyone'] })).status).to.equal(200);
    expect((await api('srg_user_add', { user: '@all@', host: 'localhost', group: 'everyone', grouphost: 'localhost' })).status).to.equal(200);
    // Each call goes to the next worker: both read the host's accounts now, una among them.
    for (let i = 0; i < 4; i++) expect(await contactsOf('gina'), `call ${i}`).to.include.members(['hugo@localhost', 'una@localhost']);
    for (const user of ['vic', 'wes', 'xia']) {
      expect((await api('register', { user, host: 'localhost', password: `${user}-pw` })).status).to.equal(200);
      for (let i = 0; i < 4; i++) expect(await contactsOf('gina'), `call ${i} after ${user}`).to.include(`${user}@localhost`);
    }
    expect((await api('srg_delete', { group: 'everyone', host: 'localhost' })).status).to.equal(200);
    for (let i = 0; i < 4; i++) expect(await contactsOf('gina'), `call ${i}`).to.not.include('xia@localhost');
  });

  it('forgets a changed password on every worker at once', async () => {
    const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`frank@localhost:${password}`).toString('base64')}` });
    // Both workers verify (and cache) the old password.
    for (let i = 0; i < 4; i++) expect((await api('get_roster', { user: 'frank', host: 'localhost' }, basic('frank-pw'))).status).to.equal(200);
    expect((await api('change_password', { user: 'frank', host: 'localhost', newpass: 'frank-new' })).status).to.equal(200);
    // Two calls, one on each worker (connections alternate): two failed logins, which the ban test counts on.
    for (let i = 0; i < 2; i++) expect((await api('get_roster', { user: 'frank', host: 'localhost' }, basic('frank-pw'))).status).to.equal(401);
    for (let i = 0; i < 2; i++) expect((await api('get_roster', { user: 'frank', host: 'localhost' }, basic('frank-new'))).status).to.equal(200);
  });

  it('applies set_loglevel and reload_config on every worker', async () => {
    expect((await api('set_loglevel', { loglevel: 'warning' })).status).to.equal(200);
    await sleep(200);
    for (let i = 0; i < 4; i++) expect((await api('get_loglevel')).body).to.equal('warning');
    expect((await api('set_loglevel', { loglevel: 'info' })).status).to.equal(200);
    await sleep(200);
    for (let i = 0; i < 4; i++) expect((await api('get_loglevel')).body).to.equal('info');
    // mod_admin_extra's commands go with the module, on both workers; they come back with it.
    const config = parse(await readFile(proc.configFile, 'utf8'));
    delete config.modules.mod_admin_extra;
    await writeFile(proc.configFile, stringify(config));
    expect((await api('reload_config')).status).to.equal(200);
    await sleep(500);
    for (let i = 0; i < 4; i++) expect((await api('connected_users_info')).status, `call ${i}`).to.equal(404);
    config.modules.mod_admin_extra = {};
    await writeFile(proc.configFile, stringify(config));
    expect((await api('reload_config')).status).to.equal(200);
    await sleep(500);
    for (let i = 0; i < 4; i++) expect((await api('connected_users_info')).status, `call ${i}`).to.equal(200);
  });

  it('starts a worker killed with SIGKILL again: its sessions end, their contacts are told, the server keeps serving', async () => {
    const [alice, bob] = clients as [Client, Client];
    const workers = await childrenOf(proc.child.pid!);
    // bob is on worker 2: alice (worker 1) sees him go.
    const gone = next(alice, (s) => s.is('presence') && s.attrs.from === String((bob as any).jid) && s.attrs.type === 'unavailable', 10_000);
    const from = proc.output().length;
    process.kill(workers[1]!, 'SIGKILL');
    await gone;
    await seenEverywhere(String((bob as any).jid), false);
    expect((await api('connected_users_number')).body).to.equal(1);
    // The primary started worker 2 again: two workers, one new.
    const deadline = Date.now() + 20_000;
    let now: number[] = [];
    while (Date.now() < deadline) {
      now = await childrenOf(proc.child.pid!);
      if (now.length === 2 && !now.includes(workers[1]!)) break;
      await sleep(100);
    }
    expect(now).to.have.length(2);
    expect(now).to.include(workers[0]!);
    expect(proc.output().slice(from)).to.match(/worker 2 died \(signal SIGKILL\)/);
    // And it serves: a new login on it chats with alice.
    while (!proc.output().slice(from).includes('"msg":"service') && Date.now() < deadline) await sleep(100);
    await sleep(500);
    const bob2 = await connectOn(2, 'bob', 'again');
    const hello = next(alice, (s) => s.is('message') && s.getChildText('body') === 'back');
    await bob2.send(xml('message', { to: String((alice as any).jid), type: 'chat' }, xml('body', {}, 'back')));
    await hello;
  });

  it('bans an address on every worker after failed logins on either', async () => {
    // Six failures from an address ban it (login_failures_per_address); two were counted above. Attempts
    // alternate between the workers: a worker that counted only its own would ban after ten more, not four.
    const attempt = async (user: string, password: string) => {
      const peer = await RawXmppPeer.connect(c2s);
      try {
        await peer.authenticate(user, password);
        return 'success';
      } catch (err) {
        return (err as Error).message;
      } finally {
        peer.destroy();
      }
    };
    let attempts = 0;
    const seen: string[] = [];
    while (attempts < 12 && !/too many failed logins/.test(seen[seen.length] = await attempt('nobody', 'wrong'))) attempts++;
    expect(attempts, `failed logins before the ban: ${seen.join('\n')}`).to.equal(4);
    // Refused on both workers, even with the right password.
    for (let i = 0; i < 2; i++) expect(await attempt('alice', 'alice-pw'), `login ${i + 1} after the ban`).to.match(/too many failed logins/);
  });

  it('stops every worker with servicectl stop', async () => {
    const workers = await childrenOf(proc.child.pid!);
    const res = await servicectl(proc.configFile, 'stop');
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    expect(await proc.exited).to.equal(0);
    for (const pid of workers) expect(() => process.kill(pid, 0), `worker ${pid}`).to.throw();
  });
});

describe('the workers option', () => {
  for (const bad of [0, 65, 'many', -1]) {
    it(`refuses workers: ${JSON.stringify(bad)} with an error that names it`, async () => {
      const port = await freePort();
      const res = await servicectl(await configWith({ workers: bad, port }), 'foreground');
      expect(res.code).to.not.equal(0);
      expect(res.stderr).to.match(/workers/).and.to.match(/from 1 to 64, or 'auto'/);
    });
  }

  it('refuses a file that does not validate as one process does: the file, the line, the option, exit 78', async () => {
    const port = await freePort();
    const file = await configWith({ workers: 2, port, loglevel: 'loud' });
    const res = await servicectl(file, 'foreground');
    expect(res.code).to.equal(78);
    expect(res.stderr).to.match(new RegExp(`invalid configuration \\(1 problem\\):\\n  ${file}:\\d+:\\d+: loglevel: expected one of 'none'`));
  });

  it('keeps the server\'s code out of the primary: the workers load it, the primary only what starts and supervises them', async () => {
    const log = join(await mkdtemp(join(tmpdir(), 'modules-')), 'loaded.txt');
    process.env.RECORD_MODULES_TO = log;
    let proc: ServerProcess;
    try {
      proc = await spawnServer((port) => ({ ...openConfig(port), workers: 2 }), (configFile) => ['--import', RECORD_MODULES, SERVICECTL, '--config', configFile, 'foreground']);
    } finally {
      delete process.env.RECORD_MODULES_TO;
    }
    try {
      await bothWorkersServe(proc);
      const loaded = await readLoaded(log);
      /** What a process's main thread (or, `threads`, its other threads) loaded. */
      const loadedBy = (pid: number, threads = false) => loaded.filter((m) => m.pid === pid && (m.thread !== 0) === threads).map((m) => m.url);
      const primary = loadedBy(proc.child.pid!);
      expect(primary.some((url) => url.endsWith('/kernel/dist/start.js'))).to.equal(true);
      expect(primary.filter((url) => SERVER_CODE.test(url))).to.deep.equal([]);
      // The configuration was validated in full, in a thread of the primary that has ended.
      expect(loadedBy(proc.child.pid!, true).some((url) => url.endsWith('/kernel/dist/server.js'))).to.equal(true);
      const workers = await childrenOf(proc.child.pid!);
      expect(workers).to.have.length(2);
      for (const worker of workers) expect(loadedBy(worker).some((url) => url.endsWith('/kernel/dist/server.js')), `worker ${worker}`).to.equal(true);
    } finally {
      await proc.cleanup();
    }
  });

  it('refuses mod_cluster under several workers, saying why', async () => {
    const port = await freePort();
    const res = await servicectl(await configWith({ workers: 2, port, modules: { mod_http_api: {}, mod_cluster: { cookie: 'secret' } } }), 'foreground');
    expect(res.code).to.not.equal(0);
    expect(res.stderr).to.match(/mod_cluster needs one process per node: this node runs 2 workers/);
    expect(res.stderr).to.not.include('secret');
  });

  it('is started (status exit 0) once a worker serves; `servicectl started` waits for every worker, `stopped` for the end', async () => {
    const proc = await spawnServer((port) => ({ ...openConfig(port), workers: 2 }));
    try {
      // The HTTP port answers: worker 1 serves, maybe alone yet. The status text and exit status agree.
      const status = await servicectl(proc.configFile, 'status');
      expect(status.stdout).to.match(/is started with status: started/);
      expect(status.code, status.stdout + status.stderr).to.equal(0);
      const started = await servicectl(proc.configFile, 'started');
      expect(started.code, started.stderr).to.equal(0);
      expect(proc.output()).to.include('2 workers serve');
      const pids = await childrenOf(proc.child.pid!);
      expect(pids).to.have.length(2);
      expect((await servicectl(proc.configFile, 'stop')).code).to.equal(0);
      const stopped = await servicectl(proc.configFile, 'stopped');
      expect(stopped.code, stopped.stderr).to.equal(0);
      expect((await servicectl(proc.configFile, 'status')).code).to.equal(3);
    } finally {
      await proc.cleanup();
    }
  });

  async function configWith(extra: { workers: unknown; port: number; modules?: Record<string, unknown>; loglevel?: string }): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'service-workers-'));
    const file = join(dir, 'service.yml');
    const { port, ...options } = extra;
    await writeFile(file, stringify({ ...openConfig(port), data_dir: join(dir, 'data'), ...options }));
    return file;
  }
});
