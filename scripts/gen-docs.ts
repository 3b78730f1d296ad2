/**
 * Writes the generated documents under docs/ (`npm run docs`), or with --check exits 1 when a committed
 * one differs from what the declarations produce.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { generatedDocs } from './generated-docs.js';

const check = process.argv.includes('--check');
let stale = 0;
for (const [path, text] of await generatedDocs()) {
  const current = await readFile(path, 'utf8').catch(() => '');
  if (current === text) continue;
  if (check) {
    process.stderr.write(`${path} is stale: run npm run docs\n`);
    stale++;
  } else {
    await writeFile(path, text);
    process.stdout.write(`wrote ${path}\n`);
  }
}
process.exit(stale ? 1 : 0);
