/**
 * stats and stats_host follow what really happens: accounts registered and removed, real clients
 * connecting and leaving, the server's uptime; unknown names and hosts are a 400 listing what is valid.
 * A sample over XML-RPC and servicectl.
 */
import { expect } from 'chai';
import { parseElement } from '@service/kernel';
import { servicectl } from '../support/cli.js';
import { request, TestServer, type RawConfig } from '../support/server.js';
import { login, stopAll, xmppConfig, type Client } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';

describe('stats, stats_host', () => {
  let t: TestServer;
  const clients: Client[] = [];
  const stats = async (name: string) => {
    const res = await t.api('stats', { name }, { basic: ADMIN });
    expect(res.status, res.text).to.equal(200);
    return res.body as number;
  };
  const statsHost = async (name: string, host: string) => {
    const res = await t.api('stats_host', { name, host }, { basic: ADMIN });
    expect(res.status, res.text).to.equal(200);
    return res.body as number;
  };
  /** Sessions end on the server a moment after the client has gone. */
  const until = async (condition: () => Promise<boolean>) => {
    const deadline = Date.now() + 10_000;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  before(async () => {
    const config: RawConfig = xmppConfig({ mod_admin_extra: {} });
    (config.listen as unknown[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    for (const user of ['ann', 'ben']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    await t.server.services.accounts.register('cy', 'example.com', 'cy-pw');
  });
  afterEach(() => stopAll(...clients.splice(0)));
  after(() => t.stop());

  it('counts registered accounts, on the server and per vhost', async () => {
    expect(await stats('registeredusers')).to.equal(4);
    expect(await statsHost('registeredusers', 'localhost')).to.equal(3);
    expect(await statsHost('registeredusers', 'example.com')).to.equal(1);
    await t.api('register', { user: 'dee', host: 'example.com', password: 'pw' }, { basic: ADMIN });
    expect(await statsHost('registeredusers', 'example.com')).to.equal(2);
    await t.api('unregister', { user: 'dee', host: 'example.com' }, { basic: ADMIN });
    expect(await stats('registeredusers')).to.equal(4);
  });

  it('counts the sessions of real clients as they come and go, and the processes with them', async () => {
    const idle = await stats('processes');
    expect(await stats('onlineusers')).to.equal(0);
    clients.push(await login(t, { user: 'ann', password: 'ann-pw', resource: 'one' }));
    clients.push(await login(t, { user: 'ann', password: 'ann-pw', resource: 'two', transport: 'ws' }));
    clients.push(await login(t, { user: 'cy', password: 'cy-pw', host: 'example.com' }));
    expect(await stats('onlineusers')).to.equal(3);
    expect(await stats('onlineusersnode')).to.equal(3);
    expect(await statsHost('onlineusers', 'localhost')).to.equal(2);
    expect(await statsHost('onlineusers', 'example.com')).to.equal(1);
    // Each session counts, and so do its connection and the listeners (HTTP, c2s, XML-RPC). Idle HTTP
    // keep-alive sockets may close meanwhile, so only the sessions are sure to add to the idle count.
    const busy = await stats('processes');
    expect(busy).to.be.at.least(3 + 3 + 3);
    expect(busy).to.be.at.least(idle + 3);
    await stopAll(clients.pop());
    await until(async () => (await statsHost('onlineusers', 'example.com')) === 0);
    expect(await stats('onlineusers')).to.equal(2);
  });

  it('tells the uptime in seconds', async () => {
    const first = await stats('uptimeseconds');
    expect(first).to.be.within(0, 600);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await stats('uptimeseconds')).to.be.at.least(first + 1);
  });

  it('refuses unknown names and hosts with a 400 that names the argument and lists what is valid', async () => {
    const unknown = await t.api('stats', { name: 'users' }, { basic: ADMIN });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.message).to.equal("argument 'name': unknown statistic 'users': use one of registeredusers, onlineusers, onlineusersnode, uptimeseconds, processes");
    const hostOnly = await t.api('stats_host', { name: 'uptimeseconds', host: 'localhost' }, { basic: ADMIN });
    expect(hostOnly.status).to.equal(400);
    expect(hostOnly.body.message).to.equal("argument 'name': unknown statistic 'uptimeseconds': use one of registeredusers, onlineusers");
    const host = await t.api('stats_host', { name: 'onlineusers', host: 'nowhere.test' }, { basic: ADMIN });
    expect(host.status).to.equal(400);
    expect(host.body.message).to.equal("argument 'host': unknown virtual host 'nowhere.test': this server serves localhost, example.com");
  });

  it('answers the same over XML-RPC and servicectl', async () => {
    const body =
      '<?xml version="1.0"?><methodCall><methodName>stats_host</methodName><params>' +
      '<param><value><struct><member><name>user</name><value><string>admin</string></value></member><member><name>server</name><value><string>localhost</string></value></member>' +
      '<member><name>password</name><value><string>adminpass</string></value></member><member><name>admin</name><value><boolean>1</boolean></value></member></struct></value></param>' +
      '<param><value><struct><member><name>name</name><value><string>registeredusers</string></value></member><member><name>host</name><value><string>localhost</string></value></member></struct></value></param>' +
      '</params></methodCall>';
    const res = await request(`http://127.0.0.1:${t.server.portOf('service_xmlrpc')}/`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body });
    const member = parseElement(res.text).getChild('params')!.getChild('param')!.getChild('value')!.getChild('struct')!.getChild('member')!;
    expect([member.getChildText('name'), member.getChild('value')!.getChildText('int')]).to.deep.equal(['stat', '3']);
    const cli = await servicectl(t.configFile, 'stats', 'registeredusers');
    expect(cli).to.deep.include({ code: 0, stdout: '4\n' });
    const bad = await servicectl(t.configFile, 'stats', 'bogus');
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.include("unknown statistic 'bogus'");
  });
});
