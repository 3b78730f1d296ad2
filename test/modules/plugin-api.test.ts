/**
 * The plugin API as a contract: a plugin built outside this repository gets the running server's copy of
 * @service/plugin-api whatever copy it was installed with, and the built-in modules build on it alone.
 */
import { expect } from 'chai';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PLUGIN_API_VERSION } from '@service/kernel';
import { TestServer, baseConfig } from '../support/server.js';

const PLUGIN_API = new URL('../../kernel/plugin-api/', import.meta.url).pathname;

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

});
