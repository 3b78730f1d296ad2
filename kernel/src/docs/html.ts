/**
 * The command reference as one standalone HTML page (gen_html_doc_for_commands): the same content as the
 * markdown reference, every text escaped. Declarations' markdown is shown as text, with `code` spans kept.
 */
import { describeType } from '../commands/coerce.js';
import type { CommandDecl } from '@service/plugin-api';
import { argumentForm, synopsis } from '../ctl/argv.js';
import type { CommandDoc } from '@service/plugin-api';
import { CLI_ONLY_TEXT, describeProvider, describeResultType, describeVersions, sentence, topicTags } from './command-facts.js';
import { exampleTranscript } from './command-line.js';
import { commandExamples } from './example-data.js';
import { renderExample, type ExampleLanguage } from './examples.js';

const STYLE = `
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.45; color: #222; }
code, pre { font-family: ui-monospace, monospace; font-size: 0.9em; }
pre { background: #f5f5f5; padding: 0.75rem; overflow-x: auto; }
table { border-collapse: collapse; margin: 0.5rem 0; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
section { border-top: 1px solid #ddd; margin-top: 2rem; }
.desc { font-weight: 600; }
`.trim();

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Escaped text with markdown `code` spans as <code>, paragraphs as <p>. */
function prose(text: string): string {
  return text
    .split(/\n\s*\n/)
    .map((paragraph) => `<p>${escapeHtml(paragraph).replace(/`([^`]+)`/g, '<code>$1</code>')}</p>`)
    .join('\n');
}

function code(text: string): string {
  return `<code>${escapeHtml(text)}</code>`;
}

export function htmlCommandsReference(docs: readonly CommandDoc[], languages: readonly ExampleLanguage[], options: { title?: string } = {}): string {
  const title = options.title ?? 'Command reference';
  const rows = docs.map((doc) => `<tr><td><a href="#${escapeHtml(doc.decl.name)}">${escapeHtml(doc.decl.name)}</a></td><td>${escapeHtml(topicTags(doc.decl).join(', '))}</td><td>${escapeHtml(doc.decl.desc)}</td></tr>`);
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>\n${STYLE}\n</style>`,
    '</head>',
    '<body>',
    `<h1>${escapeHtml(title)}</h1>`,
    '<nav>',
    '<table>',
    '<thead><tr><th>Command</th><th>Tags</th><th>Description</th></tr></thead>',
    '<tbody>',
    ...rows,
    '</tbody>',
    '</table>',
    '</nav>',
    ...docs.map((doc) => commandSection(doc, languages)),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function commandSection(doc: CommandDoc, languages: readonly ExampleLanguage[]): string {
  const decl = doc.decl;
  const out: string[] = [`<section id="${escapeHtml(decl.name)}">`, `<h2>${escapeHtml(decl.name)}</h2>`, `<p class="desc">${escapeHtml(decl.desc)}</p>`];
  if (decl.longdesc) out.push(prose(decl.longdesc));
  out.push('<h3>Arguments</h3>');
  if (decl.args.length) {
    out.push('<table>', '<thead><tr><th>Name</th><th>Type</th><th>Description</th><th>On the command line</th></tr></thead>', '<tbody>');
    for (const arg of decl.args) {
      const text = arg.example === undefined ? escapeHtml(arg.desc) : `${escapeHtml(sentence(arg.desc))} Example: ${code(typeof arg.example === 'string' ? arg.example : JSON.stringify(arg.example))}.`;
      out.push(`<tr><td>${code(arg.name)}</td><td>${escapeHtml(describeType(arg.type))}</td><td>${text}</td><td>${escapeHtml(argumentForm(decl, arg))}</td></tr>`);
    }
    out.push('</tbody>', '</table>');
  } else out.push('<p>None.</p>');
  out.push('<h3>Result</h3>', '<table>', '<thead><tr><th>Name</th><th>Type</th><th>Description</th></tr></thead>');
  out.push(`<tbody><tr><td>${code(decl.result.name)}</td><td>${escapeHtml(describeResultType(decl.result))}</td><td>${escapeHtml(decl.result.desc ?? '')}</td></tr></tbody>`, '</table>');
  out.push('<ul>', ...facts(doc).map(([label, value]) => `<li><strong>${escapeHtml(label)}:</strong> ${value}</li>`), '</ul>');
  out.push(examplesSection(decl, languages), '</section>');
  return out.join('\n');
}

/** Label and HTML value. */
function facts(doc: CommandDoc): Array<[string, string]> {
  const decl = doc.decl;
  const rows: Array<[string, string | undefined]> = [
    ['Command line', code(synopsis(decl))],
    ['HTTP', decl.cliOnly ? escapeHtml(CLI_ONLY_TEXT) : code(`POST /api/${decl.name}`)],
    ['Tags', escapeHtml(topicTags(decl).join(', ')) || undefined],
    ['Module', escapeHtml(describeProvider(doc))],
    ['API versions', mapDefined(describeVersions(doc), escapeHtml)],
    ['Note', mapDefined(decl.note, escapeHtml)],
  ];
  return rows.filter((row): row is [string, string] => row[1] !== undefined);
}

function mapDefined<T, U>(value: T | undefined, fn: (value: T) => U): U | undefined {
  return value === undefined ? undefined : fn(value);
}

function examplesSection(decl: CommandDecl, languages: readonly ExampleLanguage[]): string {
  const examples = commandExamples(decl);
  const out: string[] = [`<h3>${examples.length > 1 ? 'Examples' : 'Example'}</h3>`];
  for (const example of examples) {
    if (example.title) out.push(`<p><em>${escapeHtml(example.title)}</em></p>`);
    if (example.illustrative) out.push('<p><em>Values made up from the declared types.</em></p>');
    out.push(`<pre><code class="language-sh">${escapeHtml(exampleTranscript(decl, example).join('\n'))}</code></pre>`);
    // The other frontends refuse command-line-only commands: there is no call to show.
    if (decl.cliOnly) continue;
    for (const language of languages) {
      const rendered = renderExample(decl, example, language);
      out.push(`<pre><code class="language-${rendered.syntax}">${escapeHtml(rendered.code)}</code></pre>`);
    }
  }
  return out.join('\n');
}
