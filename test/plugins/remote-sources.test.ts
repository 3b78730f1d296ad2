/**
 * Plugins from remote registries: a registry directory served over HTTP (its index cached until
 * modules_update_specs), and an npm-compatible registry whose plugins carry a content signature in their
 * package.json and whose dependencies are installed from the same registry. A package changed after it was
 * signed is refused. Progress of an install shows in servicectl.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { servicectlOnTty } from '../support/cli.js';
import { EXAMPLE_KEYS, npmRegistry, serveDirectory, type HttpRegistry, type NpmRegistry } from '../support/plugin-registries.js';
import { REPO } from '../support/process.js';
import { TestServer, baseConfig } from '../support/server.js';

const ADMIN = 'admin@localhost:adminpass';

const helloPlugin = (name: string, module: string, extra: Partial<Parameters<typeof npmRegistry>[0][number]> = {}) => ({
  name,
  version: '1.0.0',
  plugin: { module, pluginApi: '^0.1.0' },
  manifest: { description: `${module} from npm`, type: 'module', main: 'dist/index.js', dependencies: { 'leftpad-lite': '^1.0.0' }, peerDependencies: { '@service/plugin-api': '^0.1.0' } },
  files: {
    'dist/index.js': `import pad from 'leftpad-lite';
export default { name: '${module}', version: '1.0.0', pluginApi: '^0.1.0', summary: '${module} from npm',
  commands: [{ name: '${module}_pad', tags: ['test'], desc: 'Pad', args: [{ name: 'text', type: 'string', desc: 'Text' }], result: { name: 'padded', type: 'string' } }],
  start() { return { handlers: { ${module}_pad: ({ text }) => pad(text, 8) } }; } };
`,
  },
  ...extra,
});

describe('plugins from remote registries', function () {
  this.timeout(120_000);
  let t: TestServer;
  let dir: string;
  let http: HttpRegistry;
  let npm: NpmRegistry;
  let published: any;
  const api = (command: string, args: Record<string, unknown> = {}) => t.api(command, args, { basic: ADMIN });
  const listOnly = async (...versions: string[]) => {
    const index = structuredClone(published);
    index.plugins.mod_example.versions = Object.fromEntries(Object.entries(published.plugins.mod_example.versions).filter(([v]) => versions.includes(v)));
    await writeFile(join(dir, 'index.json'), JSON.stringify(index));
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'registry-http-'));
    await cp(join(REPO, 'plugins-registry'), dir, { recursive: true, filter: (path) => !path.includes('/src/') && !path.includes('/tools/') });
    published = JSON.parse(await readFile(join(dir, 'index.json'), 'utf8'));
    await listOnly('1.0.0');
    http = await serveDirectory(dir);
    npm = await npmRegistry([
      { name: 'leftpad-lite', version: '1.0.0', manifest: { main: 'index.js' }, files: { 'index.js': "module.exports = (text, width) => text.padStart(width, '.');\n" } },
      helloPlugin('service-plugin-hello', 'mod_hello'),
      helloPlugin('service-plugin-tampered', 'mod_tampered', { tamper: { 'dist/index.js': "export default { name: 'mod_tampered' }; // changed after signing\n" } }),
    ]);
    const config = baseConfig();
    config.modules = { mod_http_api: {} };
    config.plugin_sources = [http.url, `npm:${npm.url}`];
    config.plugin_trusted_keys = { 'service-examples': (await readFile(join(EXAMPLE_KEYS, 'service-examples.pub'), 'utf8')).trim() };
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
  });
  after(async () => {
    await t?.stop();
    await http?.close();
    await npm?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists the plugins of both registries', async () => {
    const res = await api('modules_available');
    expect(res.body).to.deep.equal({
      mod_example: 'Example third-party plugin: the example_echo command echoes a text back',
      mod_hello: 'mod_hello from npm',
      mod_tampered: 'mod_tampered from npm',
    });
    expect(http.requests).to.include('GET /index.json');
  });

  it('installs over HTTP, showing its progress in servicectl, and sees a new version only after modules_update_specs', async () => {
    http.tarballDelayMs = 1600; // Long enough for servicectl to draw its progress bar.
    const cli = await servicectlOnTty(t.configFile, 'module_install', 'mod_example');
    http.tarballDelayMs = 0;
    expect(cli.code, cli.stdout + cli.stderr).to.equal(0);
    expect(cli.stdout).to.match(/\[#*-+\] 0% 0\/5 fetching mod_example 1\.0\.0/);
    expect((await api('example_echo', { text: 'hi' })).body).to.equal('hi');
    await listOnly('1.0.0', '2.0.0');
    expect((await api('module_upgrade', { module: 'mod_example' })).status).to.equal(200);
    expect((await api('example_echo', { text: 'hi' })).body).to.equal('hi'); // the cached index lists 1.0.0 only
    expect((await api('modules_update_specs')).body).to.equal(0);
    expect((await api('module_upgrade', { module: 'mod_example' })).status).to.equal(200);
    expect((await api('example_echo', { text: 'hi' })).body).to.equal('echo: hi');
  });

  it('installs from an npm registry, with its dependency from the same registry', async () => {
    const res = await api('module_install', { module: 'mod_hello' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect((await api('mod_hello_pad', { text: 'ab' })).body).to.equal('......ab');
    expect(npm.requests.some((r) => r.startsWith('GET /leftpad-lite'))).to.equal(true);
  });

  it('refuses an npm package changed after it was signed, and installs nothing', async () => {
    const res = await api('module_install', { module: 'mod_tampered' });
    expect(res.status).to.equal(422);
    expect(res.body.message).to.match(/bad signature/);
    expect((await api('modules_installed')).body).to.have.keys('mod_example', 'mod_hello');
  });

  it('says which registry cannot be read', async () => {
    await http.close();
    const res = await api('modules_update_specs');
    expect(res.status).to.equal(422);
    expect(res.body.message).to.include(http.url);
  });
});
