/**
 * Markdown references: every command in full (what `servicectl help` shows, with argument and result
 * tables and examples in the requested languages), and the commands by tag, linking to the former.
 */
import { describeType } from '../commands/coerce.js';
import type { CommandDecl } from '@service/plugin-api';
import { argumentForm, synopsis } from '../ctl/argv.js';
import type { CommandDoc } from '@service/plugin-api';
import { allTopicTags, CLI_ONLY_TEXT, describeProvider, describeResultType, describeVersions, sentence, topicTags } from './command-facts.js';
import { exampleTranscript } from './command-line.js';
import { commandExamples } from './example-data.js';
import { renderExample, type ExampleLanguage } from './examples.js';

export interface CommandsMarkdownOptions {
  /** The top heading. */
  readonly title?: string;
  /** Paragraphs under the title (a generated-file notice, conventions…). */
  readonly preamble?: readonly string[];
  /**
   * Say whether each module is enabled. A reference generated outside a running server (docs/commands.md)
   * has no such state and only names the module.
   */
  readonly moduleState?: boolean;
}

const CONVENTIONS = [
  'Every command is `POST /api/<command>` with a JSON object of its arguments (commands whose arguments are all ' +
    'scalars also answer `GET /api/<command>?<arg>=<value>`), a `servicectl` command line, and an XML-RPC method. ' +
    'Success is HTTP 200 with the bare JSON result: ST results are the integer `0` (`1` for a "no"), RS results a string. ' +
    'Failures are `{"status":"error","code":…,"message":…}` with a 4xx or 5xx status.',
];

export function markdownCommandsReference(docs: readonly CommandDoc[], languages: readonly ExampleLanguage[], options: CommandsMarkdownOptions = {}): string {
  const out: string[] = [`# ${options.title ?? 'Command reference'}`, ''];
  for (const paragraph of [...(options.preamble ?? []), ...CONVENTIONS]) out.push(paragraph, '');
  out.push('## Contents', '', '| Command | Tags | Description |', '|---|---|---|');
  for (const doc of docs) out.push(`| [${doc.decl.name}](#${anchor(doc.decl.name)}) | ${cell(topicTags(doc.decl).join(', '))} | ${cell(doc.decl.desc)} |`);
  out.push('');
  for (const doc of docs) out.push(...commandSection(doc, languages, options.moduleState ?? true));
  return `${out.join('\n').trimEnd()}\n`;
}

export interface TagsMarkdownOptions {
  readonly title?: string;
  readonly preamble?: readonly string[];
  /** The document holding the command sections the entries link to (a relative link). */
  readonly commandsDocument?: string;
}

export function markdownTagsReference(docs: readonly CommandDoc[], options: TagsMarkdownOptions = {}): string {
  const target = options.commandsDocument ?? 'commands.md';
  const out: string[] = [`# ${options.title ?? 'Commands by tag'}`, ''];
  for (const paragraph of options.preamble ?? []) out.push(paragraph, '');
  const tags = allTopicTags(docs);
  out.push(tags.map((tag) => `[${tag}](#${anchor(tag)})`).join(' · '), '');
  for (const tag of tags) {
    out.push(`## ${tag}`, '');
    for (const doc of docs.filter((d) => d.decl.tags.includes(tag))) {
      const state = doc.loaded ? '' : ` *(module ${doc.module}, not enabled)*`;
      out.push(`- [${doc.decl.name}](${target}#${anchor(doc.decl.name)}): ${inline(doc.decl.desc)}${state}`);
    }
    out.push('');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

// ---------------------------------------------------------------------------------------------

function commandSection(doc: CommandDoc, languages: readonly ExampleLanguage[], moduleState: boolean): string[] {
  const decl = doc.decl;
  const out: string[] = [`## ${decl.name}`, '', inline(decl.desc), ''];
  if (decl.longdesc) out.push(decl.longdesc, '');
  out.push('**Arguments:**', '');
  if (decl.args.length) {
    out.push('| Name | Type | Description | On the command line |', '|---|---|---|---|');
    for (const arg of decl.args) {
      const text = arg.example === undefined ? arg.desc : `${sentence(arg.desc)} Example: \`${typeof arg.example === 'string' ? arg.example : JSON.stringify(arg.example)}\`.`;
      out.push(`| \`${arg.name}\` | ${cell(describeType(arg.type))} | ${cell(text)} | ${cell(argumentForm(decl, arg))} |`);
    }
  } else out.push('None.');
  out.push('', '**Result:**', '', '| Name | Type | Description |', '|---|---|---|');
  out.push(`| \`${decl.result.name}\` | ${cell(describeResultType(decl.result))} | ${cell(decl.result.desc ?? '')} |`, '');
  out.push(...facts(doc, moduleState), '');
  out.push(...examplesSection(decl, languages));
  return out; // ends with a blank line
}

function facts(doc: CommandDoc, moduleState: boolean): string[] {
  const decl = doc.decl;
  const query = decl.args.map((arg) => `${arg.name}=…`).join('&');
  const getToo = decl.args.every((arg) => typeof arg.type === 'string') ? ` (or \`GET /api/${decl.name}${query ? `?${query}` : ''}\`)` : '';
  const rows: Array<[string, string | undefined]> = [
    ['Command line', `\`${synopsis(decl)}\``],
    ['HTTP', decl.cliOnly ? CLI_ONLY_TEXT : `\`POST /api/${decl.name}\`${getToo}`],
    ['Tags', topicTags(decl).join(', ') || undefined],
    ['Module', describeProvider(doc, moduleState)],
    ['API versions', describeVersions(doc)],
    ['Note', decl.note],
  ];
  return rows.filter((row): row is [string, string] => row[1] !== undefined).map(([label, value]) => `- **${label}:** ${inline(value)}`);
}

function examplesSection(decl: CommandDecl, languages: readonly ExampleLanguage[]): string[] {
  const examples = commandExamples(decl);
  const out: string[] = [examples.length > 1 ? '**Examples:**' : '**Example:**', ''];
  for (const example of examples) {
    if (example.title) out.push(`*${inline(example.title)}*`, '');
    if (example.illustrative) out.push('*Values made up from the declared types.*', '');
    out.push(...codeBlock('sh', exampleTranscript(decl, example).join('\n')));
    // The other frontends refuse command-line-only commands: there is no call to show.
    if (decl.cliOnly) continue;
    for (const language of languages) {
      const rendered = renderExample(decl, example, language);
      out.push(...codeBlock(rendered.syntax, rendered.code));
    }
  }
  return out;
}

/** Fenced with more backticks than any run inside the code. */
function codeBlock(syntax: string, code: string): string[] {
  const longest = Math.max(0, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [`${fence}${syntax}`, code, fence, ''];
}

/** GitHub's heading anchors: command names and tags are lower-case words, kept as they are. */
function anchor(heading: string): string {
  return heading.toLowerCase().replace(/[^a-z0-9_ -]/g, '').replace(/ /g, '-');
}

/** Text on one line (a list item, a paragraph). */
function inline(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

function cell(text: string): string {
  return inline(text).replace(/\|/g, '\\|');
}
