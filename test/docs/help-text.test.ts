/**
 * Help rendering, from declarations alone: synopsis, argument forms, examples as command lines that
 * servicectl reads back into the same arguments, the overview by tag, tag help and did-you-mean.
 */
import { expect } from 'chai';
import { coerceArgs } from '../../kernel/src/commands/coerce.js';
import { defineCommand, type CommandDecl } from '@service/plugin-api';
import { parseArgv } from '../../kernel/src/ctl/argv.js';
import type { CommandDoc } from '@service/plugin-api';
import { cliOutput, exampleCommandLine, exampleWords } from '../../kernel/src/docs/command-line.js';
import { commandExamples } from '../../kernel/src/docs/example-data.js';
import { renderCommandHelp, renderHelpTopic, renderManual, renderOverview, renderTagHelp, suggestTopics } from '../../kernel/src/docs/help-text.js';
import { KERNEL_COMMANDS } from '../../kernel/src/kernel-commands/index.js';

const pair = { object: [{ name: 'name', type: 'string' }, { name: 'value', type: 'string' }] } as const;

/** One argument of every command-line form. */
const forms = defineCommand({
  name: 'forms',
  tags: ['testing', 'v2'],
  desc: 'Every argument form',
  longdesc: 'A longer text about `forms`.',
  version: 2,
  note: 'added in 25.08',
  args: [
    { name: 'label', type: 'string', desc: 'A word', example: 'hello world' },
    { name: 'count', type: 'integer', desc: 'A number' },
    { name: 'tags', type: { list: 'string' }, desc: 'A list that is not last' },
    { name: 'options', type: { list: pair }, desc: 'Pairs, not last' },
    { name: 'person', type: { object: [{ name: 'name', type: 'string' }, { name: 'age', type: 'integer' }] }, desc: 'An object, not last' },
    { name: 'items', type: { list: 'string' }, desc: 'The trailing list' },
  ],
  result: { name: 'res', type: 'restuple', desc: 'A text' },
  examples: [
    {
      title: 'All of them',
      args: { label: 'hello world', count: 3, tags: ['a', 'b'], options: [{ name: 'x', value: '1' }, { name: 'y', value: '2' }], person: { name: 'Ann', age: 30 }, items: ['p', 'q'] },
      result: 'done',
    },
  ],
});

const trailingPairs = defineCommand({
  name: 'trailing_pairs',
  tags: ['testing'],
  desc: 'Trailing name=value pairs',
  args: [
    { name: 'room', type: 'string', desc: 'A name' },
    { name: 'options', type: { list: pair }, desc: 'Room options' },
  ],
  result: { name: 'options', type: { list: pair } },
  examples: [{ args: { room: 'lobby', options: [{ name: 'title', value: 'The Lobby' }, { name: 'members_only', value: 'true' }] }, result: [{ name: 'title', value: 'The Lobby' }] }],
});

const trailingObject = defineCommand({
  name: 'trailing_object',
  tags: ['testing'],
  desc: 'An object last',
  args: [{ name: 'person', type: { object: [{ name: 'name', type: 'string' }, { name: 'age', type: 'integer' }] }, desc: 'Someone' }],
  result: { name: 'ok', type: 'rescode' },
  examples: [{ args: { person: { name: 'Bo', age: 7 } }, result: 0 }],
});

const awkward = defineCommand({
  name: 'awkward',
  tags: ['testing'],
  desc: 'Values the plain forms cannot carry',
  args: [
    { name: 'tags', type: { list: 'string' }, desc: 'Not last, with a comma inside' },
    { name: 'options', type: { list: pair }, desc: 'Not last, with a semicolon inside' },
    { name: 'empty', type: 'string', desc: 'Empty' },
    { name: 'rest', type: { list: 'string' }, desc: 'Last, one element that looks like JSON' },
  ],
  result: { name: 'res', type: 'rescode' },
  examples: [{ args: { tags: ['a,b', 'c'], options: [{ name: 'k', value: 'x;y' }], empty: '', rest: ['[not json'] }, result: 0 }],
});

function doc(decl: CommandDecl, extra: Partial<CommandDoc> = {}): CommandDoc {
  return { decl, older: [], module: 'kernel', loaded: true, ...extra };
}

/** parseArgv gives strings; the bus coerces them: compare what the handler would get. */
function roundTrip(decl: CommandDecl, args: Readonly<Record<string, unknown>>): void {
  const words = exampleWords(decl, args);
  expect(coerceArgs(decl, parseArgv(decl, words)), `words ${JSON.stringify(words)}`).to.deep.equal(coerceArgs(decl, args));
}

describe('help text', () => {
  describe('example command lines', () => {
    it('write each argument in its form: words, comma lists, pairs, field=value', () => {
      expect(exampleWords(forms, forms.examples[0]!.args)).to.deep.equal(['hello world', '3', 'a,b', 'x=1;y=2', 'name=Ann,age=30', 'p', 'q']);
      expect(exampleCommandLine(forms, forms.examples[0]!.args)).to.equal("servicectl forms 'hello world' 3 a,b 'x=1;y=2' name=Ann,age=30 p q");
      expect(exampleWords(trailingPairs, trailingPairs.examples[0]!.args)).to.deep.equal(['lobby', 'title=The Lobby', 'members_only=true']);
      expect(exampleWords(trailingObject, trailingObject.examples[0]!.args)).to.deep.equal(['name=Bo', 'age=7']);
    });

    it('are read back by servicectl into the same arguments', () => {
      for (const decl of [forms, trailingPairs, trailingObject, awkward]) roundTrip(decl, decl.examples![0]!.args);
    });

    it('fall back to JSON words for values the plain forms would change', () => {
      const words = exampleWords(awkward, awkward.examples[0]!.args);
      expect(words[0]).to.equal('["a,b","c"]');
      expect(words[1]).to.equal('[{"name":"k","value":"x;y"}]');
      expect(words[2]).to.equal('');
      expect(words[3]).to.equal('["[not json"]');
      expect(exampleCommandLine(awkward, awkward.examples[0]!.args)).to.contain(` '' `);
    });

    it('round-trip for every kernel command example and every made-up one', () => {
      for (const decl of KERNEL_COMMANDS) {
        for (const example of commandExamples(decl)) roundTrip(decl, example.args);
      }
      const undocumented = defineCommand({ ...forms, name: 'undocumented', examples: undefined });
      const [madeUp] = commandExamples(undocumented);
      expect(madeUp!.illustrative).to.equal(true);
      roundTrip(undocumented, madeUp!.args);
    });
  });

  describe('a command', () => {
    const text = renderCommandHelp(doc(forms, { older: [{ ...forms, version: 0, args: [] }], module: 'mod_testing', loaded: false }));

    it('starts with the synopsis, then the descriptions', () => {
      const lines = text.split('\n');
      expect(lines[0]).to.equal('Usage: servicectl forms <label> <count> <tags,...> <options,...> <person> <items>...');
      expect(lines[2]).to.equal('  Every argument form');
      expect(text).to.contain('  A longer text about `forms`.');
    });

    it('describes every argument with its type and command-line form', () => {
      expect(text).to.contain('  <label>  string\n      A word\n      On the command line: one word (quote it if it has spaces).\n      Example: hello world');
      expect(text).to.contain('  <count>  integer\n      A number\n      On the command line: an integer.');
      expect(text).to.contain('  <tags>  list of string\n      A list that is not last\n      On the command line: one word, elements separated by commas.');
      expect(text).to.contain("  <options>  list of object {name: string, value: string}\n      Pairs, not last\n      On the command line: one word, elements separated by ';': name=value (or JSON).");
      expect(text).to.contain('  <person>  object {name: string, age: integer}\n      An object, not last\n      On the command line: one word: name=…,age=… (or JSON).');
      expect(text).to.contain('  <items>  list of string\n      The trailing list\n      On the command line: the remaining words, one element each.');
    });

    it('shows the result, the examples with their output, and the facts', () => {
      expect(text).to.contain('Result:\n  res  string: a text\n      A text');
      expect(text).to.contain("Example:\n  # All of them\n  $ servicectl forms 'hello world' 3 a,b 'x=1;y=2' name=Ann,age=30 p q\n  done\n");
      expect(text).to.contain('Tags: testing\n');
      expect(text).to.not.contain('v2,');
      expect(text).to.contain('Module: mod_testing (not enabled: add it under `modules` in the configuration)');
      expect(text).to.contain('API versions: 0, 2 (this describes version 2; call /api/vN/forms for version N)');
      expect(text).to.contain('Note: added in 25.08');
      expect(text).to.not.contain('command-line only');
    });

    it('prints results as servicectl does: ST nothing, lists a line each, objects in columns', () => {
      const register = KERNEL_COMMANDS.find((d) => d.name === 'register')!;
      expect(renderCommandHelp(doc(register))).to.contain('  $ servicectl register bob localhost SomEPass44\n  User bob@localhost successfully registered\n');
      expect(renderCommandHelp(doc(register))).to.contain('Result:\n  res  string: a text');
      const users = renderCommandHelp(doc(KERNEL_COMMANDS.find((d) => d.name === 'registered_users')!));
      expect(users).to.contain('  $ servicectl registered_users localhost\n  alice\n  bob\n');
      const gc = renderCommandHelp(doc(KERNEL_COMMANDS.find((d) => d.name === 'gc')!));
      expect(gc).to.contain('Result:\n  res  integer: 0 on success, 1 otherwise');
      expect(gc).to.contain('Example:\n  $ servicectl gc\n\n');
      expect(renderCommandHelp(doc(trailingPairs))).to.contain("  $ servicectl trailing_pairs lobby 'title=The Lobby' members_only=true\n  name   value\n  title  The Lobby\n");
      const no = defineCommand({ ...trailingObject, name: 'asks', examples: [{ args: { person: { name: 'Bo', age: 7 } }, result: false }] });
      expect(renderCommandHelp(doc(no))).to.contain('  $ servicectl asks name=Bo age=7\n  (exit status 1)\n');
    });

    it('shows example output as servicectl prints results', () => {
      const object = defineCommand({ ...trailingObject, name: 'object_result', result: { name: 'who', type: { object: [{ name: 'name', type: 'string' }, { name: 'tags', type: { list: 'string' } }] } } });
      const cases: Array<[CommandDecl, unknown, string]> = [
        [forms, 'done', 'done'],
        [trailingPairs, [{ name: 'title', value: 'The Lobby' }, { name: 'public', value: 'true' }], 'name    value\ntitle   The Lobby\npublic  true'],
        [trailingPairs, [], ''],
        [object, { name: 'Ann', tags: ['a', 'b'] }, 'name  Ann\ntags  a,b'],
        [KERNEL_COMMANDS.find((d) => d.name === 'registered_users')!, ['alice', 'bob'], 'alice\nbob'],
        [KERNEL_COMMANDS.find((d) => d.name === 'gc')!, 0, ''],
      ];
      for (const [decl, value, printed] of cases) expect(cliOutput(decl, value), decl.name).to.equal(printed);
    });

    it('says when a command is command-line only, and shows no output it prints elsewhere', () => {
      const schema = KERNEL_COMMANDS.find((d) => d.cliOnly && d.args.length)!;
      const help = renderCommandHelp(doc(schema));
      expect(help).to.contain('Frontends: command-line only: servicectl runs it; the HTTP API and XML-RPC refuse it');
      expect(help).to.match(new RegExp(`\\$ servicectl ${schema.name} [^\\n]+\\n\\n`));
    });

    it('marks examples made up from the types', () => {
      const bare = defineCommand({ name: 'bare', tags: ['testing'], desc: 'No examples', args: [{ name: 'host', type: 'string', desc: 'A host' }], result: { name: 'n', type: 'integer' } });
      expect(renderCommandHelp(doc(bare))).to.contain('Example (values made up from the declared types):\n  $ servicectl bare host\n  1\n');
    });
  });

  describe('the overview', () => {
    const docs = [doc(forms), doc(trailingPairs, { module: 'mod_rooms', loaded: false }), ...KERNEL_COMMANDS.map((d) => doc(d))].sort((a, b) => a.decl.name.localeCompare(b.decl.name));
    const text = renderOverview(docs);

    it('lists each command under each of its tags, aligned, without version tags', () => {
      const width = Math.max(...docs.map((d) => d.decl.name.length));
      expect(text).to.contain(`accounts\n  ${'register'.padEnd(width)}  Register an account\n`);
      expect(text).to.contain(`\n  ${'forms'.padEnd(width)}  Every argument form\n`);
      expect(text).to.not.match(/^v2$/m);
      const schema = KERNEL_COMMANDS.find((d) => d.name === 'print_sql_schema')!;
      for (const tag of schema.tags) expect(text.split(`\n${tag}\n`)[1]!.split('\n\n')[0]).to.contain('print_sql_schema');
    });

    it('notes the commands of modules that are not enabled, and how to get more', () => {
      expect(text).to.match(/trailing_pairs +Trailing name=value pairs {2}\(module mod_rooms, not enabled\)\n/);
      expect(text).to.not.match(/register .*not enabled/);
      expect(text).to.contain('servicectl help <command>');
      expect(text).to.contain('servicectl help <tag>');
    });

    it('renders a tag, and says what is close to an unknown one', () => {
      const tag = renderTagHelp('testing', docs);
      expect(tag).to.match(/^Commands tagged testing:\n\n {2}forms {11}Every argument form\n {2}trailing_pairs {2}Trailing name=value pairs {2}\(module mod_rooms, not enabled\)\n/);
      expect(renderTagHelp('acounts', docs)).to.equal("No command is tagged 'acounts'. Did you mean 'accounts'?\n");
    });

    it('suggests close command names and tags', () => {
      expect(suggestTopics('registr', docs)).to.include('register');
      expect(suggestTopics('acounts', docs)).to.deep.equal(['accounts']);
      expect(suggestTopics('zzzzzzzzzz', docs)).to.deep.equal([]);
    });

    it('resolves a help topic: command, tag, part of a name, or a did-you-mean', () => {
      expect(renderHelpTopic('register', docs)).to.deep.equal({ found: true, text: renderCommandHelp(docs.find((d) => d.decl.name === 'register')!) });
      expect(renderHelpTopic('accounts', docs).text).to.match(/^Commands tagged accounts:/);
      expect(renderHelpTopic('loglevel', docs).text).to.match(/^Commands whose name contains 'loglevel':\n\n {2}get_loglevel +Get the current loglevel\n {2}set_loglevel/);
      const unknown = renderHelpTopic('stauts', docs);
      expect(unknown.found).to.equal(false);
      expect(unknown.text).to.contain("No command or tag named 'stauts'. Did you mean 'status'");
    });

    it('puts the overview and every command in the manual', () => {
      const manual = renderManual(docs);
      expect(manual).to.contain(text);
      for (const d of docs) expect(manual).to.contain(`\n${d.decl.name}\n\nUsage: servicectl ${d.decl.name}`);
    });
  });
});
