/**
 * Push notifications with several worker processes (`workers: 2`, SQLite): the phone's session is on worker 1,
 * the app server's on worker 2. A message for the detached phone is notified from worker 1; the app server's
 * error is taken on worker 2, which removes the push session from the database and from every worker's cache,
 * so worker 1, which had read it, notifies no more. Which worker carries a session is read from the login's
 * log line, as test/workers/workers.test.ts does.
 */
import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import { freePort, spawnServer, type ServerProcess } from '../support/process.js';
import { WorkerLogins, bothWorkersServe, twoWorkersConfig } from '../support/worker-logins.js';
import { expectSilence, next, stopAll, xml, type Client } from '../support/xmpp.js';
import { NS_PUBSUB, NS_PUSH, pause } from './helpers.js';

const NS_STANZAS = 'urn:ietf:params:xml:ns:xmpp-stanzas';

function call(port: number, command: string, args: Record<string, unknown>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: `/api/${command}`, method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(args));
  });
}

describe('push notifications with several workers (workers: 2, SQLite)', function () {
  this.timeout(120_000);
  let proc: ServerProcess;
  let c2s: number;
  const logins = new WorkerLogins(() => proc, () => c2s);
  const { clients, peers } = logins;

  const connectOn = (worker: number, user: string, resource: string) => logins.client(worker, user, resource);
  const rawOn = (worker: number, user: string, resource: string) => logins.raw(worker, user, resource);
  const isPublish = (node: string) => (s: any) => s.is('iq') && s.getChild('pubsub', NS_PUBSUB)?.getChild('publish')?.attrs.node === node;

  before(async () => {
    c2s = await freePort();
    proc = await spawnServer((port) => {
      return twoWorkersConfig(port, c2s, {
        api_permissions: { 'loopback admin': { who: { acl: 'loopback' }, what: '*' } },
        modules: { mod_http_api: {}, mod_roster: {}, mod_presence: {}, mod_offline: {}, mod_stream_mgmt: {}, mod_push: {} },
      });
    });
    await bothWorkersServe(proc);
    for (const user of ['romeo', 'juliet', 'appserver', 'friar']) expect((await call(proc.port, 'register', { user, host: 'localhost', password: `${user}-pw` })).status).to.equal(200);
  });
  after(async () => {
    for (const peer of peers) peer.destroy();
    await stopAll(...clients);
    await proc?.cleanup();
  });

  it("a notification from worker 1 reaches the app server on worker 2, whose error disables the push session on every worker", async () => {
    let answer: 'result' | 'error' = 'result';
    const app = await connectOn(2, 'appserver', 'push');
    app.iqCallee.set(NS_PUBSUB, 'pubsub', () => (answer === 'result' ? true : xml('error', { type: 'cancel' }, xml('item-not-found', { xmlns: NS_STANZAS }))));
    const juliet = await connectOn(1, 'juliet', 'balcony');
    const say = (to: string, body: string) => juliet.send(xml('message', { to, type: 'chat' }, xml('body', {}, body)));

    // The probe's push session: friar is offline; its messages are stored and notified.
    const friar = await connectOn(1, 'friar', 'cell');
    await friar.iqCaller.request(xml('iq', { type: 'set' }, xml('enable', { xmlns: NS_PUSH, jid: 'appserver@localhost/push', node: 'friar-node' })));
    await friar.stop();

    const phone = await rawOn(1, 'romeo', 'phone');
    phone.write("<enable xmlns='urn:xmpp:sm:3' resume='true'/>");
    await phone.waitFor(/<enabled\b/);
    phone.write(`<iq type='set' id='push1'><enable xmlns='${NS_PUSH}' jid='appserver@localhost/push' node='romeo-node'/></iq>`);
    await phone.waitFor(/id=['"]push1['"]/);
    phone.write('<presence/>');
    await phone.waitFor(/<presence\b/);
    phone.destroy();
    await pause(300);

    // Worker 1 notifies (and has now read romeo's push sessions); the app server on worker 2 accepts.
    let published = next(app, isPublish('romeo-node'), 10_000);
    await say('romeo@localhost/phone', 'first');
    expect((await published).attrs.from).to.equal('romeo@localhost');

    // The app server refuses the next one: worker 2 takes the error and disables the push session.
    answer = 'error';
    published = next(app, isPublish('romeo-node'), 10_000);
    await say('romeo@localhost/phone', 'second');
    await published;
    answer = 'result';
    const deadline = Date.now() + 10_000;
    while (!proc.output().includes('push disabled for that node') && Date.now() < deadline) await pause(50);
    expect(proc.output()).to.include('push disabled for that node');

    // Worker 1 must have dropped what it had read: no notification for romeo any more.
    const silence = expectSilence(app, isPublish('romeo-node'), 'a notification to a disabled push session');
    await silence.proveWith(async () => {
      await say('romeo@localhost/phone', 'third');
      await say('friar@localhost', 'probe');
    }, isPublish('friar-node'));
  });
});
