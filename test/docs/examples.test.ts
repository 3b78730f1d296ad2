/**
 * Examples in the four languages of ejabberd's generator, the language list of the gen_* commands, the
 * command filter, and the declared examples of every kernel command (they must be valid calls).
 */
import { expect } from 'chai';
import { coerceArgs } from '../../kernel/src/commands/coerce.js';
import { formatResult } from '../../kernel/src/commands/result.js';
import { defineCommand, type CommandDecl } from '@service/plugin-api';
import type { CommandDoc } from '@service/plugin-api';
import { parseExampleLanguages, renderExample } from '../../kernel/src/docs/examples.js';
import { filterCommands } from '../../kernel/src/docs/filter.js';
import { KERNEL_COMMANDS } from '../../kernel/src/kernel-commands/index.js';

const register = KERNEL_COMMANDS.find((d) => d.name === 'register')!;
const registeredUsers = KERNEL_COMMANDS.find((d) => d.name === 'registered_users')!;
const gc = KERNEL_COMMANDS.find((d) => d.name === 'gc')!;

const typed = defineCommand({
  name: 'typed',
  tags: ['testing'],
  desc: 'Typed values',
  args: [
    { name: 'times', type: 'integer', desc: 'Written as a string in the example' },
    { name: 'flag', type: 'boolean', desc: 'A boolean' },
    { name: 'text', type: 'string', desc: 'Needs escaping' },
    { name: 'person', type: { object: [{ name: 'name', type: 'string' }, { name: 'age', type: 'integer' }] }, desc: 'An object' },
  ],
  result: { name: 'summary', type: { object: [{ name: 'count', type: 'integer' }, { name: 'ok', type: 'boolean' }] } },
  examples: [{ args: { times: '3', flag: false, text: 'a < b & "c" \'d\'', person: { name: 'Ann', age: 30 } }, result: { ok: true, count: 2, extra: 'dropped' } }],
});

function example(decl: CommandDecl, language: Parameters<typeof renderExample>[2]): string {
  return renderExample(decl, decl.examples![0]!, language).code;
}

function thrown(fn: () => unknown): { kind?: string; argument?: string; message?: string } {
  try {
    fn();
  } catch (err) {
    return err as { kind?: string; argument?: string; message?: string };
  }
  throw new Error('expected a failure');
}

describe('examples', () => {
  describe('languages', () => {
    it('reads a comma list, ignoring blanks, case and repeats', () => {
      expect(parseExampleLanguages('java, JSON,,json ,perl,xmlrpc')).to.deep.equal(['java', 'json', 'perl', 'xmlrpc']);
      expect(parseExampleLanguages('')).to.deep.equal([]);
    });

    it('refuses an unknown language, naming it and the argument', () => {
      const err = thrown(() => parseExampleLanguages('java,cobol'));
      expect(err.kind).to.equal('bad_argument');
      expect(err.argument).to.equal('examples');
      expect(err.message).to.match(/unknown example language 'cobol'.*java, perl, xmlrpc, json/);
    });
  });

  describe('json', () => {
    it('is the HTTP exchange with /api: request, body, status and the body exactly as /api sends it', () => {
      const lines = example(register, 'json').split('\n');
      expect(lines.slice(0, 3)).to.deep.equal(['POST /api/register', 'Content-Type: application/json', '']);
      const blank = lines.indexOf('', 3);
      expect(JSON.parse(lines.slice(3, blank).join('\n'))).to.deep.equal({ user: 'bob', host: 'localhost', password: 'SomEPass44' });
      expect(lines.slice(blank + 1)).to.deep.equal(['HTTP/1.1 200 OK', 'Content-Type: application/json', '', '"User bob@localhost successfully registered"']);
    });

    it('answers ST as 0, lists as JSON, objects with their declared fields only', () => {
      expect(example(gc, 'json')).to.equal('POST /api/gc\nContent-Type: application/json\n\n{}\n\nHTTP/1.1 200 OK\nContent-Type: application/json\n\n0');
      expect(example(registeredUsers, 'json').endsWith('\n["alice","bob"]')).to.equal(true);
      expect(example(typed, 'json').endsWith('\n{"count":2,"ok":true}')).to.equal(true);
    });
  });

  describe('xmlrpc', () => {
    it('calls the command with one struct of arguments, typed by the declaration', () => {
      const xml = example(typed, 'xmlrpc');
      expect(xml).to.match(/^<\?xml version="1.0"\?>\n<methodCall>\n {2}<methodName>typed<\/methodName>\n {2}<params>\n {4}<param>\n {6}<value>\n {8}<struct>\n/);
      expect(xml).to.contain('<name>times</name>\n            <value><int>3</int></value>');
      expect(xml).to.contain('<name>flag</name>\n            <value><boolean>0</boolean></value>');
      expect(xml).to.contain('<value><string>a &lt; b &amp; "c" \'d\'</string></value>');
      expect(xml).to.contain('<name>person</name>\n            <value>\n              <struct>\n                <member>\n                  <name>name</name>\n                  <value><string>Ann</string></value>');
      expect(xml.match(/<param>/g)).to.have.length(2, 'one param in the call, one in the response');
    });

    it('answers a struct with one member named after the result; named list elements as structs', () => {
      const xml = example(registeredUsers, 'xmlrpc');
      const response = xml.slice(xml.indexOf('<methodResponse>'));
      expect(response).to.contain('<struct>\n          <member>\n            <name>users</name>\n            <value>\n              <array>\n                <data>\n');
      expect(response).to.contain('<struct>\n                      <member>\n                        <name>username</name>\n                        <value><string>alice</string></value>');
      expect(example(gc, 'xmlrpc')).to.contain('<methodCall>\n  <methodName>gc</methodName>\n  <params>\n    <param>\n      <value>\n        <struct/>\n');
      expect(example(gc, 'xmlrpc')).to.contain('<name>res</name>\n            <value><int>0</int></value>');
      expect(example(register, 'xmlrpc')).to.contain('<name>res</name>\n            <value><string>User bob@localhost successfully registered</string></value>');
    });

    it('is balanced XML', () => {
      for (const decl of [typed, registeredUsers, gc, register]) {
        for (const document of example(decl, 'xmlrpc').split('\n\n')) {
          const stack: string[] = [];
          for (const [, close, name, selfClosing] of document.matchAll(/<(\/?)([A-Za-z]+)[^>]*?(\/?)>/g)) {
            if (selfClosing) continue;
            if (close) expect(stack.pop(), `closing ${name}`).to.equal(name);
            else stack.push(name!);
          }
          expect(stack).to.deep.equal([]);
        }
      }
    });
  });

  describe('java and perl', () => {
    it('write Apache XML-RPC client code with typed values', () => {
      const java = example(typed, 'java');
      expect(java).to.contain('config.setServerURL(new URL("http://localhost:4560/"));');
      expect(java).to.contain('args.put("times", 3);');
      expect(java).to.contain('args.put("flag", false);');
      expect(java).to.contain('args.put("text", "a < b & \\"c\\" \'d\'");');
      expect(java).to.contain('args.put("person", Map.of("name", "Ann", "age", 30));');
      expect(java).to.contain('Object result = client.execute("typed", new Object[] { args });');
      expect(java).to.contain('// result: Map.of("summary", Map.of("count", 2, "ok", true))');
    });

    it('write RPC::XML client code with typed scalars', () => {
      const perl = example(typed, 'perl');
      expect(perl).to.contain("my $client = RPC::XML::Client->new('http://localhost:4560/');");
      expect(perl).to.contain("my $response = $client->send_request('typed', {\n    times => RPC::XML::int->new(3),\n    flag => RPC::XML::boolean->new(0),\n");
      expect(perl).to.contain(`text => RPC::XML::string->new('a < b & "c" \\'d\\''),`);
      expect(perl).to.contain("person => {\n        name => RPC::XML::string->new('Ann'),\n        age => RPC::XML::int->new(30),\n    },\n});");
      expect(perl).to.contain('# $response->value is { summary => { count => 2, ok => 1 } }');
      expect(example(registeredUsers, 'perl')).to.contain("# $response->value is { users => [{ username => 'alice' }, { username => 'bob' }] }");
    });
  });

  it('of every kernel command are valid calls with results that fit the declaration', () => {
    for (const decl of KERNEL_COMMANDS) {
      expect(decl.examples?.length ?? 0, `${decl.name} has an example`).to.be.greaterThan(0);
      expect(decl.desc, `${decl.name} has a description`).to.not.equal('');
      for (const arg of decl.args) expect(arg.desc, `${decl.name} ${arg.name} is described`).to.not.equal('');
      for (const { args, result } of decl.examples!) {
        expect(() => coerceArgs(decl, args), `${decl.name} example arguments`).to.not.throw();
        expect(() => formatResult(decl.name, decl.result, result), `${decl.name} example result`).to.not.throw();
      }
    }
  });
});

describe('command filter', () => {
  const doc = (name: string, module: string, loaded: boolean): CommandDoc => ({
    decl: { name, tags: [], desc: name, args: [], result: { name: 'res', type: 'rescode' } },
    older: [],
    module,
    loaded,
  });
  const docs = [doc('register', 'kernel', true), doc('fixture_echo', 'mod_fixture', true), doc('fixture_dep_greet', 'mod_fixture_dep', false)];
  const names = (list: CommandDoc[]) => list.map((d) => d.decl.name);

  it('keeps the loaded commands for runtime', () => {
    expect(names(filterCommands(docs, 'runtime'))).to.deep.equal(['register', 'fixture_echo']);
  });

  it('matches a regular expression against command and module names', () => {
    expect(names(filterCommands(docs, '^mod_fixture$'))).to.deep.equal(['fixture_echo']);
    expect(names(filterCommands(docs, 'greet'))).to.deep.equal(['fixture_dep_greet']);
    expect(names(filterCommands(docs, '^kernel$'))).to.deep.equal(['register']);
    expect(names(filterCommands(docs, ''))).to.deep.equal(names(docs));
  });

  it('refuses an invalid regular expression, naming the argument', () => {
    const err = thrown(() => filterCommands(docs, 'fixture_('));
    expect(err.kind).to.equal('bad_argument');
    expect(err.argument).to.equal('regexp');
    expect(err.message).to.match(/not a valid regular expression/);
  });
});
