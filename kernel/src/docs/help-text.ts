/**
 * Plain-text help, for `servicectl help` and the `man` command: an overview of the commands by tag, one
 * command in full (synopsis, arguments with their command-line form, result, examples as command lines),
 * the commands of a tag, and did-you-mean suggestions for a word that is neither.
 */
import { describeType } from '../commands/coerce.js';
import type { CommandDecl } from '@service/plugin-api';
import { closest } from '../config/option-spec.js';
import { argumentForm, synopsis } from '../ctl/argv.js';
import type { CommandDoc } from '@service/plugin-api';
import { allTopicTags, CLI_ONLY_TEXT, describeProvider, describeResultType, describeVersions, topicTags } from './command-facts.js';
import { exampleTranscript } from './command-line.js';
import { commandExamples } from './example-data.js';

const WIDTH = 100;
const MORE = [
  'servicectl help <command>   a command\'s arguments, result and examples',
  'servicectl help <tag>       the commands of one tag',
];
/** Filed under this heading when a command has no tag but version markers. */
const UNTAGGED = 'other';

/** Every command by tag (a command appears under each of its tags), with the way to more help. */
export function renderOverview(docs: readonly CommandDoc[]): string {
  const width = nameWidth(docs);
  const out: string[] = ['Commands by tag:', ''];
  for (const [tag, tagged] of byTag(docs)) out.push(tag, ...tagged.map((doc) => commandLine(doc, width)), '');
  if (docs.some((doc) => !doc.loaded)) {
    out.push('Commands marked "not enabled" belong to a module that is not enabled: they fail until it is added under `modules`.', '');
  }
  out.push('More:', ...MORE.map((line) => `  ${line}`));
  return `${out.join('\n')}\n`;
}

/** One command in full. */
export function renderCommandHelp(doc: CommandDoc): string {
  const decl = doc.decl;
  const out: string[] = [`Usage: ${synopsis(decl)}`, '', ...wrap(decl.desc, '  ')];
  if (decl.longdesc) out.push('', ...wrap(decl.longdesc, '  '));
  out.push('', 'Arguments:');
  if (!decl.args.length) out.push('  none');
  for (const arg of decl.args) {
    out.push(`  <${arg.name}>  ${describeType(arg.type)}`);
    out.push(...wrap(arg.desc, '      '));
    out.push(...wrap(`On the command line: ${argumentForm(decl, arg)}.`, '      '));
    if (arg.example !== undefined) out.push(...wrap(`Example: ${typeof arg.example === 'string' ? arg.example : JSON.stringify(arg.example)}`, '      '));
  }
  out.push('', 'Result:', `  ${decl.result.name}  ${describeResultType(decl.result)}`);
  if (decl.result.desc) out.push(...wrap(decl.result.desc, '      '));
  out.push('', ...renderExamples(decl));
  const facts: Array<[string, string | undefined]> = [
    ['Tags', topicTags(decl).join(', ') || undefined],
    ['Module', describeProvider(doc)],
    ['API versions', describeVersions(doc)],
    ['Note', decl.note],
    ['Frontends', decl.cliOnly ? CLI_ONLY_TEXT : undefined],
  ];
  out.push('');
  for (const [label, value] of facts) if (value) out.push(...wrap(`${label}: ${value}`, ''));
  return `${out.join('\n')}\n`;
}

/** The commands filed under one tag; for an unknown tag, what is close to it. */
export function renderTagHelp(tag: string, docs: readonly CommandDoc[]): string {
  const tagged = docs.filter((doc) => doc.decl.tags.includes(tag));
  if (!tagged.length) {
    const hints = suggestTopics(tag, docs);
    return `No command is tagged '${tag}'.${hints.length ? ` Did you mean ${hints.map((h) => `'${h}'`).join(', ')}?` : ''}\n`;
  }
  const width = nameWidth(tagged);
  return [`Commands tagged ${tag}:`, '', ...tagged.map((doc) => commandLine(doc, width)), '', MORE[0]!, ''].join('\n');
}

/** Command names and tags close to a word that is neither, best first. */
export function suggestTopics(word: string, docs: readonly CommandDoc[]): string[] {
  return closest(word, [...docs.map((doc) => doc.decl.name), ...allTopicTags(docs)], 3);
}

export interface HelpTopic {
  /** False when the word is no command, tag nor part of a command name: `text` then says what is close. */
  readonly found: boolean;
  readonly text: string;
}

/**
 * `servicectl help <word>`, as ejabberdctl reads it: a command's help, else a tag's commands, else the
 * commands whose name contains the word, else a did-you-mean.
 */
export function renderHelpTopic(word: string, docs: readonly CommandDoc[]): HelpTopic {
  const command = docs.find((doc) => doc.decl.name === word);
  if (command) return { found: true, text: renderCommandHelp(command) };
  if (docs.some((doc) => doc.decl.tags.includes(word))) return { found: true, text: renderTagHelp(word, docs) };
  const containing = word ? docs.filter((doc) => doc.decl.name.includes(word.toLowerCase())) : [];
  if (containing.length) {
    const width = nameWidth(containing);
    return { found: true, text: [`Commands whose name contains '${word}':`, '', ...containing.map((doc) => commandLine(doc, width)), '', MORE[0]!, ''].join('\n') };
  }
  const hints = suggestTopics(word, docs);
  const hint = hints.length ? ` Did you mean ${hints.map((h) => `'${h}'`).join(', ')}?` : '';
  return { found: false, text: `No command or tag named '${word}'.${hint}\nservicectl help lists every command.\n` };
}

/** The whole reference as text: the overview, then every command's help. */
export function renderManual(docs: readonly CommandDoc[]): string {
  const rule = '-'.repeat(WIDTH);
  const sections = docs.map((doc) => `${rule}\n${doc.decl.name}\n\n${renderCommandHelp(doc)}`);
  return ['servicectl command reference', '', renderOverview(docs), ...sections].join('\n');
}

// ---------------------------------------------------------------------------------------------

function renderExamples(decl: CommandDecl): string[] {
  const examples = commandExamples(decl);
  const heading = examples.some((e) => e.illustrative) ? 'Example (values made up from the declared types):' : examples.length > 1 ? 'Examples:' : 'Example:';
  const out: string[] = [heading];
  examples.forEach((example, i) => {
    if (i > 0) out.push('');
    if (example.title) out.push(`  # ${example.title}`);
    out.push(...exampleTranscript(decl, example).map((line) => `  ${line}`));
  });
  return out;
}

function byTag(docs: readonly CommandDoc[]): Map<string, CommandDoc[]> {
  const groups = new Map<string, CommandDoc[]>();
  for (const doc of docs) {
    const tags = topicTags(doc.decl);
    for (const tag of tags.length ? tags : [UNTAGGED]) groups.set(tag, [...(groups.get(tag) ?? []), doc]);
  }
  return new Map([...groups].sort(([a], [b]) => a.localeCompare(b)));
}

function nameWidth(docs: readonly CommandDoc[]): number {
  return Math.max(0, ...docs.map((doc) => doc.decl.name.length));
}

function commandLine(doc: CommandDoc, width: number): string {
  const state = doc.loaded ? '' : `  (module ${doc.module}, not enabled)`;
  return `  ${doc.decl.name.padEnd(width)}  ${doc.decl.desc}${state}`;
}

/**
 * Paragraphs re-flowed to the terminal width under `indent`. Lines that are list items or table rows in
 * the markdown of a longdesc keep their own line.
 */
function wrap(text: string, indent: string): string[] {
  const out: string[] = [];
  for (const paragraph of text.split(/\n\s*\n/)) {
    if (out.length) out.push('');
    const lines = paragraph.split('\n');
    if (lines.some((line) => /^\s*([-*|]|\d+\.)\s/.test(line))) {
      out.push(...lines.map((line) => `${indent}${line}`));
      continue;
    }
    let current = '';
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      if (current && indent.length + current.length + 1 + word.length > WIDTH) {
        out.push(`${indent}${current}`);
        current = word;
      } else current = current ? `${current} ${word}` : word;
    }
    if (current) out.push(`${indent}${current}`);
  }
  return out;
}
