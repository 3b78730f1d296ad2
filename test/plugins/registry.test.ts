/**
 * Plugins at runtime, end to end on one running server (no restart anywhere): the third-party example
 * mod_example is installed from a registry directory, used over /api, XML-RPC and servicectl, upgraded to
 * its second version (whose change is in a file other than the entry), refused when its tarball is tampered
 * with (the old version keeps running), and uninstalled; its command's scope follows it. A client connected
 * throughout keeps its session and is answered after each step.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { servicectl } from '../support/cli.js';
import { REPO } from '../support/process.js';
import { TestServer, baseConfig } from '../support/server.js';
import { xmlrpcCall } from '../support/xmlrpc.js';
import { expectSilence, login, stopAll, xml, xmppConfig, type Client, type Silence } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';
const REGISTRY = join(REPO, 'plugins-registry');
const EXAMPLE_KEY = (await readFile(join(REGISTRY, 'keys', 'service-examples.pub'), 'utf8')).trim();

interface Index {
  registry: number;
  plugins: Record<string, { versions: Record<string, { tarball: string; integrity: string; signature: string }> }>;
}

describe('plugins at runtime: registry, install, upgrade, uninstall', function () {
  this.timeout(60_000);
  let t: TestServer;
  let registry: string;
  let client: Client;
  let xmlrpcUrl: string;
  let published: Index;
  /** Watches the connected client for anything but the answers to its own pings, from login to the end. */
  let silence: Silence;

  /** The registry lists only these versions of mod_example (as if the others were not published yet). */
  const publish = async (...versions: string[]) => {
    const index = structuredClone(published);
    index.plugins.mod_example!.versions = Object.fromEntries(Object.entries(published.plugins.mod_example!.versions).filter(([v]) => versions.includes(v)));
    await writeFile(join(registry, 'index.json'), JSON.stringify(index));
  };
  const api = (command: string, args: Record<string, unknown> = {}) => t.api(command, args, { basic: ADMIN });
  const echo = async (text: string) => {
    const res = await api('example_echo', { text });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as string;
  };
  const scopeAnswer = async () => (await api('oauth_issue_token', { jid: 'admin@localhost', ttl: 60, scopes: ['example_echo'] })).body;
  /** The connected client is still online and answered (a ping to its server). */
  const clientStillServed = async () => {
    const answer = await client.iqCaller.request(xml('iq', { type: 'get', to: 'localhost' }, xml('ping', { xmlns: 'urn:xmpp:ping' })));
    expect(answer.attrs.type).to.equal('result');
  };

  before(async () => {
    registry = await mkdtemp(join(tmpdir(), 'registry-'));
    await cp(REGISTRY, registry, { recursive: true, filter: (path) => !path.includes('/src/') && !path.includes('/tools/') });
    published = JSON.parse(await readFile(join(registry, 'index.json'), 'utf8')) as Index;
    await publish('1.0.0');
    const config = xmppConfig({ mod_ping: {}, mod_admin_extra: {} });
    (config.listen as any[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
    config.oauth_access = 'all';
    config.plugin_sources = [registry];
    config.plugin_trusted_keys = { 'service-examples': EXAMPLE_KEY };
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    await t.server.services.accounts.register('ann', 'localhost', 'ann-pw');
    xmlrpcUrl = `http://127.0.0.1:${t.server.portOf('service_xmlrpc')}/`;
    client = await login(t, { user: 'ann', password: 'ann-pw' });
    silence = expectSilence(client, (stanza) => !(stanza.name === 'iq' && stanza.attrs.type === 'result'), 'stanzas other than its pings\' answers');
  });
  after(async () => {
    await stopAll(client);
    await t?.stop();
    await rm(registry, { recursive: true, force: true });
  });

  it('lists the registry and nothing installed; the command and its scope do not exist yet', async () => {
    expect((await api('modules_available')).body).to.deep.equal({ mod_example: 'Example third-party plugin: the example_echo command echoes a text back' });
    expect((await api('modules_installed')).body).to.deep.equal({});
    expect((await api('example_echo', { text: 'hi' })).status).to.equal(404);
    expect((await scopeAnswer()).message).to.match(/invalid_scope: 'example_echo' is not a scope of this server/);
    expect((await api('module_check', { module: 'mod_example' })).body).to.equal(0);
  });

  it('installs mod_example 1.0.0: its command works over /api, XML-RPC and servicectl, and its scope is valid', async () => {
    const res = await api('module_install', { module: 'mod_example' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(await echo('hello')).to.equal('hello');
    const rpc = await xmlrpcCall(xmlrpcUrl, 'example_echo', { user: 'admin', server: 'localhost', password: 'adminpass', admin: true }, { text: 'hello' });
    expect(rpc.fault, JSON.stringify(rpc.fault)).to.equal(undefined);
    expect(JSON.stringify(rpc.result)).to.include('hello');
    const cli = await servicectl(t.configFile, 'example_echo', 'hello');
    expect(cli.code, cli.stderr).to.equal(0);
    expect(cli.stdout.trim()).to.equal('hello');
    expect((await scopeAnswer()).token).to.be.a('string');
    expect((await api('modules_installed')).body).to.have.keys('mod_example');
    const lock = JSON.parse(await readFile(join(t.dir, 'data', 'plugins', 'lock.json'), 'utf8'));
    expect(lock.plugins.mod_example.version).to.equal('1.0.0');
    await clientStillServed();
  });

  it('refuses a second install and a built-in name', async () => {
    expect((await api('module_install', { module: 'mod_example' })).status).to.equal(409);
    const builtin = await api('module_install', { module: 'mod_roster' });
    expect(builtin.status).to.equal(409);
    expect(builtin.body.message).to.match(/built-in module/);
    expect((await api('module_install', { module: 'Bad-Name' })).status).to.equal(400);
  });

  it('refuses a tampered 2.0.0 tarball, and 1.0.0 keeps running', async () => {
    await publish('1.0.0', '2.0.0');
    const tarball = join(registry, published.plugins.mod_example!.versions['2.0.0']!.tarball);
    const original = await readFile(tarball);
    const tampered = Buffer.from(original);
    tampered[tampered.length - 20] ^= 0xff;
    await writeFile(tarball, tampered);
    try {
      const res = await api('module_upgrade', { module: 'mod_example' });
      expect(res.status).to.equal(422);
      expect(res.body.message).to.match(/integrity mismatch/);
      const check = await api('module_check', { module: 'mod_example' });
      expect(check.status).to.equal(422);
    } finally {
      await writeFile(tarball, original);
    }
    expect(await echo('hello')).to.equal('hello');
    await clientStillServed();
  });

  it('refuses a version signed by a publisher that is not trusted, or whose signature does not match', async () => {
    const index = JSON.parse(await readFile(join(registry, 'index.json'), 'utf8')) as Index;
    const v2 = index.plugins.mod_example!.versions['2.0.0']!;
    v2.signature = index.plugins.mod_example!.versions['1.0.0']!.signature;
    await writeFile(join(registry, 'index.json'), JSON.stringify(index));
    const res = await api('module_upgrade', { module: 'mod_example' });
    expect(res.status).to.equal(422);
    expect(res.body.message).to.match(/bad signature/);
    expect(await echo('hello')).to.equal('hello');
    await publish('1.0.0', '2.0.0');
  });

  it("upgrades to 2.0.0: the change in a file other than the entry shows, with no restart", async () => {
    const res = await api('module_upgrade', { module: 'mod_example' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(await echo('hello')).to.equal('echo: hello');
    const cli = await servicectl(t.configFile, 'example_echo', 'again');
    expect(cli.stdout.trim()).to.equal('echo: again');
    const lock = JSON.parse(await readFile(join(t.dir, 'data', 'plugins', 'lock.json'), 'utf8'));
    expect(lock.plugins.mod_example.version).to.equal('2.0.0');
    expect((await api('module_upgrade', { module: 'mod_example' })).status).to.equal(200); // already the newest
    await clientStillServed();
  });

  it('uninstalls: the command is gone and its scope is invalid_scope again', async () => {
    const res = await api('module_uninstall', { module: 'mod_example' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect((await api('example_echo', { text: 'hi' })).status).to.equal(404);
    expect((await scopeAnswer()).message).to.match(/invalid_scope: 'example_echo' is not a scope of this server/);
    expect((await api('modules_installed')).body).to.deep.equal({});
    expect((await api('module_uninstall', { module: 'mod_example' })).status).to.equal(404);
    await clientStillServed();
  });

  it('restarts a running module with restart_module (2: same code), and answers 1 for a module that is not running', async () => {
    expect((await api('restart_module', { host: 'localhost', module: 'mod_ping' })).body).to.equal(2);
    expect((await api('restart_module', { host: 'localhost', module: 'mod_example' })).body).to.equal(1);
    expect((await api('restart_module', { host: 'nowhere.example', module: 'mod_ping' })).body).to.equal(1);
    expect((await api('update_list')).body).to.deep.equal([]);
    expect((await api('update', { module: 'all' })).body).to.match(/nothing to update/);
    await clientStillServed();
  });

  it('the client connected throughout saw nothing of it: a message sent now is the first stanza it gets', async () => {
    const probe = await silence.proveWith(
      async () => {
        // To the full JID: the client sent no presence, so a bare-JID message would go offline.
        const res = await api('send_message', { type: 'chat', from: 'admin@localhost', to: String((client as any).jid), subject: '', body: 'probe' });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
      },
      (stanza) => stanza.name === 'message' && stanza.getChildText('body') === 'probe',
    );
    expect(probe.attrs.from).to.match(/^admin@localhost/);
  });
});

describe('plugins with the default settings', function () {
  this.timeout(60_000);
  let t: TestServer;
  const api = (command: string, args: Record<string, unknown> = {}) => t.api(command, args, { basic: ADMIN });

  before(async () => {
    t = await TestServer.start(); // No plugin_sources, no plugin_trusted_keys: the bundled registry and its example publisher.
    await t.bootstrapAdmin();
  });
  after(() => t?.stop());

  it('installs the newest mod_example from the bundled registry, offline, and removes it', async () => {
    expect((await api('modules_update_specs')).body).to.equal(0);
    expect((await api('module_install', { module: 'mod_example' })).status).to.equal(200);
    expect((await api('example_echo', { text: 'hi' })).body).to.equal('echo: hi');
    expect((await api('module_uninstall', { module: 'mod_example' })).status).to.equal(200);
    expect((await api('example_echo', { text: 'hi' })).status).to.equal(404);
  });

  it('trusts only the keys it is given once plugin_trusted_keys is set', async () => {
    const config = baseConfig();
    config.plugin_trusted_keys = { someone: EXAMPLE_KEY };
    const other = await TestServer.start(config);
    try {
      await other.bootstrapAdmin();
      const res = await other.api('module_install', { module: 'mod_example' }, { basic: ADMIN });
      expect(res.status).to.equal(422);
      expect(res.body.message).to.match(/publisher 'service-examples' is not trusted/);
    } finally {
      await other.stop();
    }
  });
});
