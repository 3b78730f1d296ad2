/**
 * Generated documents are committed; this fails when one no longer matches its declarations.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { generatedDocs } from '../../scripts/generated-docs.js';

describe('generated documentation', () => {
  it('is up to date with the declarations (run npm run docs)', async () => {
    for (const [path, text] of await generatedDocs()) {
      const committed = await readFile(path, 'utf8').catch(() => '');
      expect(committed === text, `${path} is stale: run npm run docs`).to.equal(true);
    }
  });
});
