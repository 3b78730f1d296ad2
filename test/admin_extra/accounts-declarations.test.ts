/**
 * The account and statistics commands are declared as the spec's rows give them (argument names and
 * types, result name and shape, tags, API version), with examples that are valid calls: every frontend,
 * the help and the docs are derived from these declarations.
 */
import { expect } from 'chai';
import { coerceArgs } from '../../kernel/src/commands/coerce.js';
import { formatResult } from '../../kernel/src/commands/result.js';
import type { CommandDecl } from '@service/plugin-api';
import { accountCommands } from '../../modules/mod_admin_extra/src/accounts/index.js';

const BAN_DETAILS = { list: { object: [{ name: 'name', type: 'string' }, { name: 'value', type: 'string' }] } };

/** name → [argument name:type…], result name, result type, tags, version — from the spec's tables. */
const SPEC: Record<string, { args: string[]; result: [string, unknown]; tags: string[]; version?: number }> = {
  change_password: { args: ['user:string', 'host:string', 'newpass:string'], result: ['res', 'rescode'], tags: ['accounts'] },
  check_account: { args: ['user:string', 'host:string'], result: ['res', 'rescode'], tags: ['accounts'] },
  check_password: { args: ['user:string', 'host:string', 'password:string'], result: ['res', 'rescode'], tags: ['accounts'] },
  check_password_hash: { args: ['user:string', 'host:string', 'passwordhash:string', 'hashmethod:string'], result: ['res', 'rescode'], tags: ['accounts'] },
  ban_account: { args: ['user:string', 'host:string', 'reason:string'], result: ['res', 'rescode'], tags: ['accounts', 'v2'], version: 2 },
  get_ban_details: { args: ['user:string', 'host:string'], result: ['ban_details', BAN_DETAILS], tags: ['accounts', 'v2'], version: 2 },
  unban_account: { args: ['user:string', 'host:string'], result: ['res', 'rescode'], tags: ['accounts', 'v2'], version: 2 },
  delete_old_users: { args: ['days:integer'], result: ['res', 'restuple'], tags: ['accounts', 'purge'] },
  delete_old_users_vhost: { args: ['host:string', 'days:integer'], result: ['res', 'restuple'], tags: ['accounts', 'purge'] },
  stats: { args: ['name:string'], result: ['stat', 'integer'], tags: ['statistics'] },
  stats_host: { args: ['name:string', 'host:string'], result: ['stat', 'integer'], tags: ['statistics'] },
};

/** The result type without the docs-only item names, to compare shapes. */
function shape(type: unknown): unknown {
  if (typeof type !== 'object' || type === null) return type;
  if ('list' in type) return { list: shape((type as { list: unknown }).list) };
  if ('object' in type) return { object: (type as { object: Array<{ name: string; type: unknown }> }).object.map((f) => ({ name: f.name, type: shape(f.type) })) };
  return type;
}

describe('account command declarations', () => {
  it('declares each command of the assignment once', () => {
    expect(accountCommands.map((d) => d.name).sort()).to.deep.equal(Object.keys(SPEC).sort());
  });

  for (const decl of accountCommands as readonly CommandDecl[]) {
    it(`${decl.name} matches the spec's row and documents its failures`, () => {
      const spec = SPEC[decl.name]!;
      expect(decl.args.map((a) => `${a.name}:${a.type}`)).to.deep.equal(spec.args);
      expect([decl.result.name, shape(decl.result.type)]).to.deep.equal(spec.result);
      expect(decl.tags).to.deep.equal(spec.tags);
      expect(decl.version ?? 0).to.equal(spec.version ?? 0);
      for (const arg of decl.args) expect(arg.desc, `${decl.name} ${arg.name}`).to.not.equal('');
      expect(decl.longdesc, decl.name).to.match(/400|404|409|422|Fails|fails/);
    });

    it(`${decl.name} has examples that are valid calls`, () => {
      expect(decl.examples).to.not.be.empty;
      for (const { args, result } of decl.examples!) {
        expect(() => coerceArgs(decl, args)).to.not.throw();
        expect(() => formatResult(decl.name, decl.result, result)).to.not.throw();
      }
    });
  }
});
