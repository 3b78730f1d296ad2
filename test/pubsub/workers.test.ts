/**
 * PEP and the pubsub service under `workers: 2` (SQLite): everything they keep is in the database, so an
 * account on one worker is notified of what a contact on the other publishes, capabilities verified by one
 * worker are known to the other without asking the client again, and a subscription taken on one worker
 * gets the notifications of a publish on the other. Which worker carries a session is read from the login's
 * log line, as test/workers does.
 */
import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import { freePort, spawnServer, type ServerProcess } from '../support/process.js';
import { WorkerLogins, bothWorkersServe, twoWorkersConfig } from '../support/worker-logins.js';
import { stopAll, xml, type Client } from '../support/xmpp.js';
import { NS_EVENT, NS_NICK, NS_PUBSUB, announceCaps, event, publish } from './helpers.js';

function call(port: number, command: string, args: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(args);
    const req = httpRequest({ host: '127.0.0.1', port, path: `/api/${command}`, method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text || 'null') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PEP and pubsub under workers: 2 (mod_pubsub, SQLite)', function () {
  this.timeout(120_000);
  let proc: ServerProcess;
  let c2s: number;
  const logins = new WorkerLogins(() => proc, () => c2s);
  const clients = logins.clients;
  const api = async (command: string, args: Record<string, unknown>) => {
    const res = await call(proc.port, command, args);
    expect(res.status, `${command}: ${JSON.stringify(res.body)}`).to.equal(200);
    return res.body;
  };

  /** Logs `user` in on `worker`; until the other worker lists the session, it would not notify it. */
  const connectOn = async (worker: number, user: string, resource: string): Promise<Client> => {
    const client = await logins.client(worker, user, resource);
    const deadline = Date.now() + 3000;
    let seen = 0;
    while (seen < 4) {
      if (((await api('connected_users', {})) as string[]).includes(`${user}@localhost/${resource}`)) seen++;
      else if (Date.now() > deadline) throw new Error(`${user}/${resource} is not listed by every worker`);
      else await sleep(20);
    }
    return client;
  };

  before(async () => {
    c2s = await freePort();
    proc = await spawnServer((port) => {
      return twoWorkersConfig(port, c2s, { modules: { mod_http_api: {}, mod_admin_extra: {}, mod_roster: {}, mod_presence: {}, mod_disco: {}, mod_pubsub: {} } });
    });
    await bothWorkersServe(proc);
    for (const user of ['alice', 'bob']) await api('register', { user, host: 'localhost', password: `${user}-pw` });
    for (const [a, b] of [['alice', 'bob'], ['bob', 'alice']]) await api('add_rosteritem', { localuser: a, localhost: 'localhost', user: b, host: 'localhost', nick: b, groups: [], subs: 'both' });
  });
  after(async () => {
    await stopAll(...clients);
    await proc?.cleanup();
  });

  it('notifies a contact on the other worker, with caps verified once for both workers', async () => {
    const alice = await connectOn(1, 'alice', 'one');
    const bob = await connectOn(2, 'bob', 'two');
    await announceCaps(alice, [`${NS_NICK}+notify`]);
    // The same client software on worker 2: the features worker 1 verified are in the database.
    await announceCaps(bob, [`${NS_NICK}+notify`], { expectQuery: false });
    const toBob = event(bob, 'alice@localhost', NS_NICK);
    await publish(alice, NS_NICK, xml('nick', { xmlns: NS_NICK }, 'Alice'));
    expect((await toBob).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!.getChildText('nick', NS_NICK)).to.equal('Alice');
    const toAlice = event(alice, 'bob@localhost', NS_NICK);
    await publish(bob, NS_NICK, xml('nick', { xmlns: NS_NICK }, 'Bob'));
    expect((await toAlice).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!.getChildText('nick', NS_NICK)).to.equal('Bob');
  });

  it('notifies a subscriber of the pubsub service on the other worker', async () => {
    const [alice, bob] = clients as [Client, Client];
    await alice.iqCaller.request(xml('iq', { type: 'set', to: 'pubsub.localhost' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('create', { node: 'news' }))));
    await bob.iqCaller.request(xml('iq', { type: 'set', to: 'pubsub.localhost' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('subscribe', { node: 'news', jid: 'bob@localhost/two' }))));
    const notified = event(bob, 'pubsub.localhost', 'news');
    await alice.iqCaller.request(xml('iq', { type: 'set', to: 'pubsub.localhost' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('publish', { node: 'news' }, xml('item', { id: 'n1' }, xml('entry', { xmlns: 'urn:example:news' }, 'hello'))))));
    expect((await notified).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!.attrs.id).to.equal('n1');
  });
});
