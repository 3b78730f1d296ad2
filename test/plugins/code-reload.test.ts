/**
 * Live code reloads of a module made of several files, on a running server: after a file other than the
 * entry changes on disk, update_list names the module, restart_module reloads its whole code (0) and
 * `update` does the same; unchanged code restarts as it is (2). compile type-checks a TypeScript source
 * against the plugin API, reports errors with file and line, and reloads the module. And a plugin version
 * that fails to start is rolled back: the version that ran before runs again with its command.
 */
import { createHash, createPrivateKey, sign } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import * as tar from 'tar';
import { pluginSignaturePayload } from '@service/plugin-api';
import { REPO } from '../support/process.js';
import { TestServer, baseConfig } from '../support/server.js';

const ADMIN = 'admin@localhost:adminpass';
const REGISTRY = join(REPO, 'plugins-registry');

/** A two-file plugin: the entry declares `local_echo`, whose answer comes from reply.js. */
async function writeLocalPlugin(dir: string, reply: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'mod_local', version: '1.0.0', type: 'module', main: 'index.js', service: { module: 'mod_local' } }));
  await writeFile(
    join(dir, 'index.js'),
    `import { reply } from './reply.js';
export default {
  name: 'mod_local', version: '1.0.0', pluginApi: '^0.1.0', summary: 'Local test plugin',
  commands: [{ name: 'local_echo', tags: ['test'], desc: 'Echo', args: [{ name: 'text', type: 'string', desc: 'Text' }], result: { name: 'echo', type: 'string' } }],
  start() { return { handlers: { local_echo: ({ text }) => reply(text) } }; },
};
`,
  );
  await writeReply(dir, reply);
}

async function writeReply(dir: string, reply: string): Promise<void> {
  const file = join(dir, 'reply.js');
  await writeFile(file, `export const reply = (text) => ${JSON.stringify(reply)} + text;\n`);
  // A later mtime even within the file system's time resolution.
  const later = new Date(Date.now() + 5000);
  await utimes(file, later, later);
}

describe('module code reloads', function () {
  this.timeout(60_000);
  let t: TestServer;
  let pluginDir: string;
  const api = (command: string, args: Record<string, unknown> = {}) => t.api(command, args, { basic: ADMIN });

  before(async () => {
    const config = baseConfig();
    config.modules = { mod_http_api: {}, mod_admin_extra: {}, mod_local: {} };
    t = await TestServer.start(config, { prepare: (dataDir) => writeLocalPlugin(join(dataDir, 'plugins', 'mod_local'), 'one:') });
    await t.bootstrapAdmin();
    pluginDir = join(t.dir, 'data', 'plugins', 'mod_local');
  });
  after(() => t?.stop());

  it('restarts unchanged code as it is (2), and lists nothing to update', async () => {
    expect((await api('local_echo', { text: 'x' })).body).to.equal('one:x');
    expect((await api('update_list')).body).to.deep.equal([]);
    expect((await api('restart_module', { host: 'localhost', module: 'mod_local' })).body).to.equal(2);
    expect((await api('local_echo', { text: 'x' })).body).to.equal('one:x');
  });

  it('sees a changed file other than the entry, and restart_module reloads the whole module (0)', async () => {
    await writeReply(pluginDir, 'two:');
    expect((await api('update_list')).body).to.deep.equal(['mod_local']);
    expect((await api('local_echo', { text: 'x' })).body).to.equal('one:x'); // Not before it is asked.
    expect((await api('restart_module', { host: 'localhost', module: 'mod_local' })).body).to.equal(0);
    expect((await api('local_echo', { text: 'x' })).body).to.equal('two:x');
    expect((await api('update_list')).body).to.deep.equal([]);
  });

  it('update reloads a changed module, and says when there is nothing to update', async () => {
    await writeReply(pluginDir, 'three:');
    expect((await api('update', { module: 'all' })).body).to.equal('Updated modules: mod_local');
    expect((await api('local_echo', { text: 'x' })).body).to.equal('three:x');
    expect((await api('update', { module: 'mod_local' })).body).to.match(/did not change on disk/);
    expect((await api('update', { module: 'mod_nothing' })).status).to.equal(404);
  });
});

/** A TypeScript plugin (src/ → dist/ by its tsconfig.json), shipped with a hand-written first build. */
async function writeTypedPlugin(dir: string): Promise<void> {
  await mkdir(join(dir, 'src'), { recursive: true });
  await mkdir(join(dir, 'dist'), { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'mod_typed', version: '1.0.0', type: 'module', main: 'dist/index.js', service: { module: 'mod_typed' } }));
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, rootDir: 'src', outDir: 'dist' }, include: ['src'] }),
  );
  const entry = (suffix: string) => `import { defineCommand, defineModule } from '@service/plugin-api';
import { reply } from './reply.js';
const typedEcho = defineCommand({ name: 'typed_echo', tags: ['test'], desc: 'Echo', args: [{ name: 'text', type: 'string', desc: 'Text' }], result: { name: 'echo', type: 'string' } });
export default defineModule({
  name: 'mod_typed', version: '1.0.0', pluginApi: '^0.1.0', summary: 'Typed test plugin', commands: [typedEcho],
  start() { return { handlers: { typed_echo: ({ text }${suffix}) => reply(text) } }; },
});
`;
  await writeFile(join(dir, 'src', 'index.ts'), entry(''));
  await writeFile(join(dir, 'src', 'reply.ts'), "export const reply = (text: string): string => 'ts:' + text;\n");
  await writeFile(join(dir, 'dist', 'index.js'), "import { reply } from './reply.js';\nexport default { name: 'mod_typed', version: '1.0.0', pluginApi: '^0.1.0', summary: 'Typed test plugin', commands: [{ name: 'typed_echo', tags: ['test'], desc: 'Echo', args: [{ name: 'text', type: 'string', desc: 'Text' }], result: { name: 'echo', type: 'string' } }], start() { return { handlers: { typed_echo: ({ text }) => reply(text) } }; } };\n");
  await writeFile(join(dir, 'dist', 'reply.js'), "export const reply = (text) => 'js:' + text;\n");
}

describe('compile', function () {
  this.timeout(120_000);
  let t: TestServer;
  let pluginDir: string;
  const api = (command: string, args: Record<string, unknown> = {}) => t.api(command, args, { basic: ADMIN });

  before(async () => {
    const config = baseConfig();
    config.modules = { mod_http_api: {}, mod_admin_extra: {}, mod_typed: {} };
    t = await TestServer.start(config, { prepare: (dataDir) => writeTypedPlugin(join(dataDir, 'plugins', 'mod_typed')) });
    await t.bootstrapAdmin();
    pluginDir = join(t.dir, 'data', 'plugins', 'mod_typed');
  });
  after(() => t?.stop());

  it('reports type errors against the plugin API with file, line and column, and writes and reloads nothing', async () => {
    expect((await api('typed_echo', { text: 'x' })).body).to.equal('js:x');
    await writeFile(join(pluginDir, 'src', 'reply.ts'), "export const reply = (text: string): number => 'ts:' + text;\n");
    const res = await api('compile', { file: 'plugins/mod_typed/src/reply.ts' });
    expect(res.status).to.equal(422);
    expect(res.body.message).to.match(/src\/reply\.ts:1:\d+: TS2322 /);
    expect(await readFile(join(pluginDir, 'dist', 'reply.js'), 'utf8')).to.include("'js:'");
    expect((await api('typed_echo', { text: 'x' })).body).to.equal('js:x');
  });

  it('compiles a correct source and reloads the running module with it', async () => {
    await writeFile(join(pluginDir, 'src', 'reply.ts'), "export const reply = (text: string): string => 'ts:' + text;\n");
    const res = await api('compile', { file: join(pluginDir, 'src', 'reply.ts') });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect((await api('typed_echo', { text: 'x' })).body).to.equal('ts:x');
  });

  it('refuses a file that is not TypeScript, does not exist, or is in no module', async () => {
    expect((await api('compile', { file: join(pluginDir, 'dist', 'reply.js') })).status).to.equal(400);
    expect((await api('compile', { file: 'plugins/mod_typed/src/missing.ts' })).status).to.equal(400);
    await writeFile(join(t.dir, 'loose.ts'), 'export const x = 1;\n');
    const loose = await api('compile', { file: join(t.dir, 'loose.ts') });
    expect(loose.status).to.equal(400);
    expect(loose.body.message).to.match(/not in a module/);
  });
});

describe('plugin versions the installer refuses or rolls back', function () {
  this.timeout(60_000);
  let t: TestServer;
  let registry: string;
  const api = (command: string, args: Record<string, unknown> = {}) => t.api(command, args, { basic: ADMIN });

  /** Publishes a version of a plugin into the test registry, signed with the example publisher's (public) key. */
  async function publishSigned(options: { module: string; version: string; pluginApi?: string; manifest?: Record<string, unknown>; entry: string }): Promise<void> {
    const { module, version, pluginApi = '^0.1.0' } = options;
    const staging = await mkdtemp(join(tmpdir(), 'package-'));
    const pkg = join(staging, 'package');
    await mkdir(join(pkg, 'dist'), { recursive: true });
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: module, version, type: 'module', main: 'dist/index.js', service: { module, pluginApi }, ...options.manifest }));
    await writeFile(join(pkg, 'dist', 'index.js'), options.entry);
    await mkdir(join(registry, module), { recursive: true });
    const tarball = join(registry, module, `${module}-${version}.tgz`);
    await tar.c({ gzip: true, cwd: staging, file: tarball, portable: true }, ['package']);
    await rm(staging, { recursive: true, force: true });
    const bytes = await readFile(tarball);
    const integrity = `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
    const key = createPrivateKey(await readFile(join(REGISTRY, 'keys', 'service-examples.pem')));
    const signature = sign(null, pluginSignaturePayload({ name: module, version, pluginApi, integrity }), key).toString('base64');
    const index = JSON.parse(await readFile(join(registry, 'index.json'), 'utf8'));
    index.plugins[module] ??= { summary: `${module} (test)`, publisher: 'service-examples', versions: {} };
    index.plugins[module].versions[version] = { pluginApi, tarball: `${module}/${module}-${version}.tgz`, integrity, signature };
    await writeFile(join(registry, 'index.json'), JSON.stringify(index));
  }

  /** mod_example 3.0.0, whose start throws. */
  const publishBroken = () =>
    publishSigned({
      module: 'mod_example',
      version: '3.0.0',
      entry: "export default { name: 'mod_example', version: '3.0.0', pluginApi: '^0.1.0', summary: 'broken', start() { throw new Error('3.0.0 cannot start'); } };\n",
    });

  before(async () => {
    registry = await mkdtemp(join(tmpdir(), 'registry-'));
    await cp(REGISTRY, registry, { recursive: true, filter: (path) => !path.includes('/src/') && !path.includes('/tools/') });
    const config = baseConfig();
    config.plugin_sources = [registry];
    config.plugin_trusted_keys = { 'service-examples': (await readFile(join(REGISTRY, 'keys', 'service-examples.pub'), 'utf8')).trim() };
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
  });
  after(async () => {
    await t?.stop();
    await rm(registry, { recursive: true, force: true });
  });

  it('is rolled back: the version that ran before runs again, with its command', async () => {
    expect((await api('module_install', { module: 'mod_example' })).status).to.equal(200);
    expect((await api('example_echo', { text: 'hi' })).body).to.equal('echo: hi');
    await publishBroken();
    const res = await api('module_upgrade', { module: 'mod_example' });
    expect(res.status).to.equal(422);
    expect(res.body.message).to.match(/3\.0\.0 did not start: .*3\.0\.0 cannot start.*2\.0\.0 runs again/);
    expect((await api('example_echo', { text: 'hi' })).body).to.equal('echo: hi');
    const lock = JSON.parse(await readFile(join(t.dir, 'data', 'plugins', 'lock.json'), 'utf8'));
    expect(lock.plugins.mod_example.version).to.equal('2.0.0');
  });

  it("refuses a plugin with no version for this server's plugin API, naming what each version needs", async () => {
    await publishSigned({ module: 'mod_future', version: '1.0.0', pluginApi: '^9.0.0', entry: 'export default {};\n' });
    const res = await api('module_install', { module: 'mod_future' });
    expect(res.status).to.equal(422);
    expect(res.body.message).to.match(/no version is compatible with this server's plugin API 0\.1\.\d+ \(1\.0\.0 needs \^9\.0\.0\)/);
  });

  it('refuses a plugin with install scripts, and leaves nothing behind', async () => {
    await publishSigned({ module: 'mod_scripted', version: '1.0.0', manifest: { scripts: { postinstall: 'node -e "1"' } }, entry: 'export default {};\n' });
    const res = await api('module_install', { module: 'mod_scripted' });
    expect(res.status).to.equal(422);
    expect(res.body.message).to.match(/install scripts \(postinstall\)/);
    expect((await api('modules_installed')).body).to.have.keys('mod_example');
    const leftovers = await readdir(join(t.dir, 'data', 'plugins')).catch(() => []);
    expect(leftovers).to.not.include('mod_scripted');
  });
});
