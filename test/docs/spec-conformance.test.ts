/**
 * Every command we declare against its row in the spec (test/fixtures/spec/commands.json, a copy of the
 * reference's machine-readable extract): the same argument names in the same order, the same result (ST,
 * RS, or the result's name), the same tags and, where the spec names one, the same module. Scripts written
 * for ejabberd call commands by these names and read results by these keys.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { staticCommandDocs } from '@service/kernel';

interface SpecRow {
  name: string;
  args: Array<{ name: string }>;
  result: { name?: string } | null;
  result_text: string;
  module: string | null;
  tags: string[];
}

const SPEC: SpecRow[] = JSON.parse(readFileSync(new URL('../fixtures/spec/commands.json', import.meta.url), 'utf8')).commands;

describe('commands against the spec', () => {
  it('declare the arguments, results, tags and modules of their spec rows', async () => {
    const docs = new Map((await staticCommandDocs()).map((doc) => [doc.decl.name, doc]));
    const problems: string[] = [];
    let checked = 0;
    for (const row of SPEC) {
      const doc = docs.get(row.name);
      if (!doc) continue;
      checked++;
      const { decl } = doc;
      const args = decl.args.map((a) => a.name).join(', ');
      const specArgs = row.args.map((a) => a.name).join(', ');
      if (args !== specArgs) problems.push(`${row.name}: arguments (${args}), the spec has (${specArgs})`);
      if (row.result_text === 'ST' && decl.result.type !== 'rescode') problems.push(`${row.name}: the spec's result is ST (an integer status)`);
      else if (row.result_text === 'RS' && decl.result.type !== 'restuple') problems.push(`${row.name}: the spec's result is RS (a text)`);
      // modules_installed's row names its result by reference ("same shape as modules_available").
      else if (row.result?.name && !row.result.name.startsWith('same shape as ') && row.result.name !== decl.result.name) problems.push(`${row.name}: result ${decl.result.name}, the spec has ${row.result.name}`);
      const tags = [...decl.tags].sort().join(', ');
      const specTags = [...row.tags].sort().join(', ');
      if (tags !== specTags) problems.push(`${row.name}: tags ${tags}, the spec has ${specTags}`);
      if (row.module && row.module !== doc.module) problems.push(`${row.name}: module ${doc.module}, the spec has ${row.module}`);
    }
    expect(problems).to.deep.equal([]);
    // The kernel's and mod_admin_extra's rows at least (a later module adds its own).
    expect(checked).to.be.at.least(95);
  });

  it('cover every mod_admin_extra row', async () => {
    const names = new Set((await staticCommandDocs()).map((doc) => doc.decl.name));
    const missing = SPEC.filter((row) => row.module === 'mod_admin_extra' && !names.has(row.name)).map((row) => row.name);
    expect(missing).to.deep.equal([]);
  });

  it('cover every mod_muc_admin row', async () => {
    const docs = (await staticCommandDocs()).filter((doc) => doc.module === 'mod_muc_admin');
    const names = new Set(docs.map((doc) => doc.decl.name));
    const rows = SPEC.filter((row) => row.module === 'mod_muc_admin');
    expect(rows).to.have.length(28);
    expect(rows.filter((row) => !names.has(row.name)).map((row) => row.name)).to.deep.equal([]);
    // And no command of the module that the spec does not have.
    expect([...names].filter((name) => !rows.some((row) => row.name === name))).to.deep.equal([]);
  });
});
