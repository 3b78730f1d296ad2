/** The documents generated from declarations, as path → text (shared by the script and the staleness test). */
import { join } from 'node:path';
import { BUILTIN_MODULES_DIR } from '@service/kernel';
import { ModuleCatalog } from '../kernel/dist/modules/catalog.js';
import { configurationReference } from '../kernel/dist/docs/config-reference.js';
import { errorsReference } from '../kernel/dist/docs/errors-reference.js';

export const REPO = new URL('../', import.meta.url).pathname;

export async function generatedDocs(): Promise<Map<string, string>> {
  const catalog = new ModuleCatalog(BUILTIN_MODULES_DIR, '/nonexistent');
  const modules = await Promise.all((await catalog.available()).map((name) => catalog.definition(name)));
  return new Map([
    [join(REPO, 'docs/configuration.md'), configurationReference(modules)],
    [join(REPO, 'docs/errors.md'), errorsReference()],
  ]);
}
