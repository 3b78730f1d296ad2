/**
 * The plugin API as a contract: a plugin built outside this repository gets the running server's copy of
 * @service/plugin-api whatever copy it was installed with, and the built-in modules build on it alone.
 */
import { expect } from 'chai';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PLUGIN_API_VERSION } from '@service/kernel';
import { TestServer, baseConfig } from '../support/server.js';

const PLUGIN_API = new URL('../../kernel/plugin-api/', import.meta.url).pathname;
const MODULES = new URL('../../modules/', import.meta.url).pathname;

describe('the plugin API', () => {
  it('is versioned on its own, and says which version it is', async () => {
    const pkg = JSON.parse(await readFile(join(PLUGIN_API, 'package.json'), 'utf8')) as { version: string; name: string };
    expect(pkg.name).to.equal('@service/plugin-api');
    expect(PLUGIN_API_VERSION).to.equal(pkg.version);
  });

  it("resolves a plugin's own copy of the package to the server's, so there is one copy of each class", async () => {
    const config = baseConfig();
    config.modules = { mod_http_api: {}, mod_fixture_api_copy: {} };
    const t = await TestServer.start(config, {
      plugins: ['mod_fixture_api_copy'],
      // The plugin ships a stale copy of the API of its own, as `npm install` in its directory would give it.
      prepare: async (dataDir) => {
        const copy = join(dataDir, 'plugins', 'mod_fixture_api_copy', 'node_modules', '@service', 'plugin-api');
        await mkdir(copy, { recursive: true });
        await writeFile(join(copy, 'package.json'), JSON.stringify({ name: '@service/plugin-api', version: '0.0.1', type: 'module', main: 'index.js' }));
        await writeFile(
          join(copy, 'index.js'),
          [
            "export const PLUGIN_API_VERSION = '0.0.1-stale-copy';",
            'export class CommandError extends Error { constructor(kind, message) { super(message); this.kind = `stale-${kind}`; } }',
            'export class XmlElement {}',
            'export const x = () => ({});',
          ].join('\n'),
        );
      },
    });
    try {
      await t.bootstrapAdmin();
      const res = await t.api('fixture_api_copy', {}, { basic: 'admin@localhost:adminpass' });
      // The stale copy's CommandError has an unknown kind (a 500); the server's copy is a 409 with its version.
      expect(res.status, res.text).to.equal(409);
      expect(res.body.message).to.equal(`plugin API ${PLUGIN_API_VERSION}; XmlElement shared: true`);
    } finally {
      await t.stop();
    }
  });

  it('is all a built-in module imports of the server: no kernel internals, only API packages of other modules', async () => {
    const offenders: string[] = [];
    for (const module of await readdir(MODULES)) {
      const pkg = JSON.parse(await readFile(join(MODULES, module, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
      if (pkg.dependencies?.['@service/kernel']) offenders.push(`${module}/package.json depends on @service/kernel`);
      for (const file of await sourceFiles(join(MODULES, module, 'src'))) {
        const text = await readFile(file, 'utf8');
        for (const [, specifier] of text.matchAll(/from '(@service\/[^']+)'/g)) {
          if (specifier === '@service/plugin-api' || /^@service\/mod_[a-z0-9_]+\/api$/.test(specifier!)) continue;
          offenders.push(`${file.slice(MODULES.length)} imports ${specifier}`);
        }
      }
    }
    expect(offenders).to.deep.equal([]);
  });
});

/** The TypeScript sources below `dir`, at any depth. */
async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}
