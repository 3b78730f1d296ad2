/**
 * The roster commands as declared: the spec's argument names and types, result names, tags and API
 * versions (what ejabberd's clients and the acceptance suite call), and examples that are valid calls.
 */
import { expect } from 'chai';
import { coerceArgs } from '../../kernel/src/commands/coerce.js';
import { formatResult } from '../../kernel/src/commands/result.js';
import type { CommandDecl, ValueType } from '@service/plugin-api';
import { rosterCommands } from '../../modules/mod_admin_extra/src/roster/index.js';

/** The spec's rows (commands.json): arguments as `name:type`, the result name and type, the tags. */
const SPEC: Record<string, { args: string[]; result: string; tags: string[] }> = {
  add_rosteritem: {
    args: ['localuser:string', 'localhost:string', 'user:string', 'host:string', 'nick:string', 'groups:[string]', 'subs:string'],
    result: 'res:rescode',
    tags: ['roster', 'v1'],
  },
  delete_rosteritem: { args: ['localuser:string', 'localhost:string', 'user:string', 'host:string'], result: 'res:rescode', tags: ['roster'] },
  get_roster: { args: ['user:string', 'host:string'], result: 'contacts:[{jid:string,nick:string,subscription:string,pending:string,groups:[string]}]', tags: ['roster'] },
  get_roster_count: { args: ['user:string', 'host:string'], result: 'value:integer', tags: ['roster'] },
  process_rosteritems: {
    args: ['action:string', 'subs:string', 'asks:string', 'users:string', 'contacts:string'],
    result: 'response:[{user:string,contact:string}]',
    tags: ['roster'],
  },
  push_alltoall: { args: ['host:string', 'group:string'], result: 'res:rescode', tags: ['roster'] },
  push_roster: { args: ['file:string', 'user:string', 'host:string'], result: 'res:rescode', tags: ['roster'] },
  push_roster_all: { args: ['file:string'], result: 'res:rescode', tags: ['roster'] },
};

function typeText(type: ValueType | 'rescode' | 'restuple'): string {
  if (typeof type === 'string') return type;
  if ('list' in type) return `[${typeText(type.list)}]`;
  return `{${type.object.map((f) => `${f.name}:${typeText(f.type)}`).join(',')}}`;
}

/** The definition a call gets by default: the newest version. */
function latest(name: string): CommandDecl {
  return (rosterCommands as readonly CommandDecl[]).filter((d) => d.name === name).sort((a, b) => (b.version ?? 0) - (a.version ?? 0))[0]!;
}

describe('roster command declarations', () => {
  it('declares exactly the spec rows of the roster area, with their names, types, results and tags', () => {
    expect([...new Set(rosterCommands.map((d) => d.name))].sort()).to.deep.equal(Object.keys(SPEC).sort());
    for (const [name, row] of Object.entries(SPEC)) {
      const decl = latest(name);
      expect(decl.args.map((a) => `${a.name}:${typeText(a.type)}`), name).to.deep.equal(row.args);
      expect(`${decl.result.name}:${typeText(decl.result.type)}`, name).to.equal(row.result);
      expect(decl.tags, name).to.deep.equal(row.tags);
      expect(decl.desc, name).to.be.a('string').and.not.equal('');
      expect(decl.longdesc, `${name} says what counts as failure`).to.match(/Fails/);
      for (const arg of decl.args) expect(arg.desc, `${name} ${arg.name}`).to.not.equal('');
    }
  });

  it('keeps add_rosteritem version 0 (one group text) under the v1 that the spec describes', () => {
    const versions = rosterCommands.filter((d) => d.name === 'add_rosteritem');
    expect(versions.map((d) => [d.version, d.args.find((a) => a.name.startsWith('group'))!.name])).to.deep.equal([
      [0, 'group'],
      [1, 'groups'],
    ]);
    expect(versions.every((d) => d.account?.join() === 'localuser,localhost')).to.equal(true);
  });

  it('has examples that are valid calls with valid results', () => {
    for (const decl of rosterCommands as readonly CommandDecl[]) {
      expect(decl.examples, decl.name).to.have.length.greaterThan(0);
      for (const { args, result } of decl.examples!) {
        expect(() => coerceArgs(decl, args), `${decl.name} example arguments`).to.not.throw();
        expect(() => formatResult(decl.name, decl.result, result), `${decl.name} example result`).to.not.throw();
      }
    }
  });
});
