/**
 * Where the publishing tools get the registry contract: REGISTRY_FORMAT, pluginSignaturePayload() and contentDigest() from
 * the built @service/plugin-api (kernel/plugin-api/dist), so that what a publisher signs is, byte for byte,
 * what the server's installer verifies; the tools never keep a copy of it. Outside this repository, set
 * SERVICE_PLUGIN_API to the path of a built copy of the package (e.g. a plugin's
 * node_modules/@service/plugin-api).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const packageDir = process.env.SERVICE_PLUGIN_API
  ? resolve(process.env.SERVICE_PLUGIN_API)
  : fileURLToPath(new URL('../../../kernel/plugin-api/', import.meta.url));
const entry = join(packageDir, 'dist', 'index.js');
if (!existsSync(entry)) {
  console.error(`${entry} does not exist: build the plugin API first (at the repository root: npx tsc -b kernel/plugin-api)`);
  process.exit(2);
}

export const { REGISTRY_FORMAT, pluginSignaturePayload, contentDigest } = await import(pathToFileURL(entry).href);
