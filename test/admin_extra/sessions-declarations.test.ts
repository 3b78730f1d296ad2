/**
 * The declarations of mod_admin_extra's session, presence and stanza commands against the reference:
 * argument names in order, result name and kind, tags (the newest version carries the spec's vN tag),
 * and documentation complete enough to generate the reference (descriptions, failure cases, examples
 * that are valid calls with valid results).
 */
import { expect } from 'chai';
import { coerceArgs } from '../../kernel/src/commands/coerce.js';
import { formatResult } from '../../kernel/src/commands/result.js';
import type { CommandDecl } from '@service/plugin-api';
import { sessionCommands } from '../../modules/mod_admin_extra/src/sessions/index.js';

interface SpecRow {
  args: string[];
  result: string;
  /** `rescode` for the spec's ST. */
  kind?: 'rescode';
  tags: string[];
}

/** The rows of the reference (release 25.08) for these commands. */
const SPEC: Record<string, SpecRow> = {
  connected_users_info: { args: [], result: 'connected_users_info', tags: ['session'] },
  user_sessions_info: { args: ['user', 'host'], result: 'sessions_info', tags: ['session'] },
  connected_users_vhost: { args: ['host'], result: 'connected_users_vhost', tags: ['session'] },
  num_resources: { args: ['user', 'host'], result: 'resources', tags: ['session'] },
  resource_num: { args: ['user', 'host', 'num'], result: 'resource', tags: ['session'] },
  kick_session: { args: ['user', 'host', 'resource', 'reason'], result: 'res', kind: 'rescode', tags: ['session'] },
  get_presence: { args: ['user', 'host'], result: 'presence', tags: ['session'] },
  set_presence: { args: ['user', 'host', 'resource', 'type', 'show', 'status', 'priority'], result: 'res', kind: 'rescode', tags: ['session', 'v1'] },
  status_list: { args: ['status'], result: 'users', tags: ['session', 'v3'] },
  status_list_host: { args: ['host', 'status'], result: 'users', tags: ['session', 'v3'] },
  status_num: { args: ['status'], result: 'users', tags: ['session', 'statistics'] },
  status_num_host: { args: ['host', 'status'], result: 'users', tags: ['session', 'statistics'] },
  send_message: { args: ['type', 'from', 'to', 'subject', 'body'], result: 'res', kind: 'rescode', tags: ['stanza'] },
  send_stanza: { args: ['from', 'to', 'stanza'], result: 'res', kind: 'rescode', tags: ['stanza'] },
  send_stanza_c2s: { args: ['user', 'host', 'resource', 'stanza'], result: 'res', kind: 'rescode', tags: ['stanza'] },
  privacy_set: { args: ['user', 'host', 'xmlquery'], result: 'res', kind: 'rescode', tags: ['stanza'] },
};

const all = sessionCommands as readonly CommandDecl[];

/** The definition a call without version gets: the newest. */
function newest(name: string): CommandDecl | undefined {
  return all.filter((d) => d.name === name).sort((a, b) => (b.version ?? 0) - (a.version ?? 0))[0];
}

describe('mod_admin_extra: session and stanza declarations', () => {
  it('declare exactly the commands of the area', () => {
    expect([...new Set(all.map((d) => d.name))].sort()).to.deep.equal(Object.keys(SPEC).sort());
  });

  for (const [name, row] of Object.entries(SPEC)) {
    it(`${name} has the reference's arguments, result and tags`, () => {
      const decl = newest(name)!;
      expect(decl.args.map((a) => a.name)).to.deep.equal(row.args);
      expect(decl.result.name).to.equal(row.result);
      if (row.kind) expect(decl.result.type).to.equal(row.kind);
      expect(decl.tags).to.deep.equal(row.tags);
    });
  }

  it('the result objects have the reference\'s fields, in its order', () => {
    const fields = (name: string) => {
      const type = newest(name)!.result.type as any;
      return (type.list?.object ?? type.object).map((f: { name: string }) => f.name);
    };
    expect(fields('connected_users_info')).to.deep.equal(['jid', 'connection', 'ip', 'port', 'priority', 'node', 'uptime', 'status', 'resource', 'statustext']);
    expect(fields('user_sessions_info')).to.deep.equal(['connection', 'ip', 'port', 'priority', 'node', 'uptime', 'status', 'resource', 'statustext']);
    expect(fields('get_presence')).to.deep.equal(['jid', 'show', 'status']);
    expect(fields('status_list')).to.deep.equal(['jid', 'priority', 'status']);
    expect(fields('status_list_host')).to.deep.equal(['jid', 'priority', 'status']);
  });

  it('a revised command keeps its older definition for older API versions, without the revision tag', () => {
    for (const [name, version] of [['set_presence', 1], ['status_list', 3], ['status_list_host', 3]] as const) {
      const versions = all.filter((d) => d.name === name).map((d) => d.version ?? 0).sort();
      expect(versions, name).to.deep.equal([0, version]);
      expect(all.find((d) => d.name === name && !d.version)!.tags).to.deep.equal(['session']);
    }
  });

  it('every definition is documented, failure cases included, with examples that are valid calls', () => {
    for (const decl of all) {
      expect(decl.desc, decl.name).to.not.equal('');
      expect(decl.longdesc, decl.name).to.be.a('string').that.is.not.empty;
      for (const arg of decl.args) expect(arg.desc, `${decl.name} ${arg.name}`).to.not.equal('');
      if (decl.args.length) expect(decl.longdesc, `${decl.name} says when it fails`).to.match(/\bfails\b/i);
      expect(decl.examples?.length ?? 0, `${decl.name} has an example`).to.be.greaterThan(0);
      for (const { args, result } of decl.examples!) {
        expect(() => coerceArgs(decl, args), `${decl.name} example arguments`).to.not.throw();
        expect(() => formatResult(decl.name, decl.result, result), `${decl.name} example result`).to.not.throw();
      }
    }
  });
});
