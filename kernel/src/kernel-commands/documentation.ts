/**
 * Documentation commands (man, gen_markdown_doc_for_commands, gen_markdown_doc_for_tags,
 * gen_html_doc_for_commands): generated from the command declarations of the running server, including
 * those of modules that are available but not enabled.
 */
import { badArgument, failed } from '@service/plugin-api';
import { defineCommand, type HandlersFor } from '@service/plugin-api';
import type { CommandDoc } from '@service/plugin-api';
import { EXAMPLE_LANGUAGES, parseExampleLanguages } from '../docs/examples.js';
import { filterCommands } from '../docs/filter.js';
import { renderManual } from '../docs/help-text.js';
import { htmlCommandsReference } from '../docs/html.js';
import { markdownCommandsReference, markdownTagsReference } from '../docs/markdown.js';
import type { KernelServices } from '../modules/services.js';
import { writeOutputFile } from './write-file.js';

const file = (example: string) =>
  ({
    name: 'file',
    type: 'string',
    desc: 'Path of the file to write; a relative path is relative to data_dir. Its directory must exist; an existing file is replaced',
    example,
  }) as const;

const regexp = {
  name: 'regexp',
  type: 'string',
  desc: '`runtime` for the commands loaded now, or a regular expression matched against each command name and module name (`kernel` for the commands always present)',
  example: 'runtime',
} as const;

const examples = {
  name: 'examples',
  type: 'string',
  desc: `Comma list of the example languages to include: ${EXAMPLE_LANGUAGES.join(', ')} (empty for none)`,
  example: 'java,json',
} as const;

const WRITE_FAILURES = 'Fails with 422 when the file cannot be written (missing directory, no permission), naming the path and the reason.';

/** The usual reasons a write fails, in words. */

export const documentationCommands = [
  defineCommand({
    name: 'man',
    tags: ['documentation'],
    desc: 'Generate a man page for every command',
    longdesc:
      'The full command reference as plain text: the commands by tag, then every command with its synopsis, arguments, result and examples — ' +
      'what `servicectl help <command>` shows, for all of them. Covers the commands of available modules that are not enabled, marked as such.',
    note: 'added 20.01',
    args: [],
    result: { name: 'res', type: 'restuple', desc: 'The reference, as text' },
    examples: [{ args: {}, result: 'servicectl command reference\n\nCommands by tag:\n\naccounts\n  convert_to_scram  Convert the passwords of a vhost to SCRAM\n…' }],
  }),
  defineCommand({
    name: 'gen_markdown_doc_for_commands',
    tags: ['documentation'],
    desc: 'Generates markdown documentation for commands',
    longdesc:
      'Writes a markdown reference of the selected commands: for each one its description, argument and result tables, ' +
      'command-line form, tags, module and examples in the requested languages (`json` is the HTTP exchange with /api, ' +
      '`xmlrpc` the XML-RPC documents, `java` and `perl` XML-RPC client code). ' +
      'An invalid regular expression, one that matches no command, or an unknown example language is a 400 naming the argument. ' +
      WRITE_FAILURES,
    args: [file('/tmp/commands.md'), regexp, examples],
    result: { name: 'res', type: 'rescode' },
    examples: [
      { title: 'The commands loaded now, with HTTP examples', args: { file: '/tmp/commands.md', regexp: 'runtime', examples: 'json' }, result: 0 },
      { title: 'The commands of one module', args: { file: 'mod_http_api.md', regexp: '^mod_http_api$', examples: 'java,perl,xmlrpc,json' }, result: 0 },
    ],
  }),
  defineCommand({
    name: 'gen_markdown_doc_for_tags',
    tags: ['documentation'],
    desc: 'Generates markdown documentation for tags',
    longdesc:
      'Writes a markdown list of the tags, each with its commands and their descriptions. Entries link to `commands.md#<command>`: ' +
      'write the command reference with gen_markdown_doc_for_commands under that name in the same directory. Commands of modules that are not enabled are marked. ' +
      WRITE_FAILURES,
    note: 'added 21.12',
    args: [file('/tmp/tags.md')],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { file: '/tmp/tags.md' }, result: 0 }],
  }),
  defineCommand({
    name: 'gen_html_doc_for_commands',
    tags: ['documentation'],
    desc: 'Generates html documentation for commands',
    longdesc:
      'Writes the same reference as gen_markdown_doc_for_commands as one standalone HTML page (no external resources). ' +
      'An invalid regular expression, one that matches no command, or an unknown example language is a 400 naming the argument. ' +
      WRITE_FAILURES,
    args: [file('/tmp/commands.html'), regexp, examples],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { file: '/tmp/commands.html', regexp: 'runtime', examples: 'java,perl,xmlrpc,json' }, result: 0 }],
  }),
] as const;

export function documentationHandlers(services: KernelServices): HandlersFor<typeof documentationCommands> {
  const selected = async (pattern: string): Promise<CommandDoc[]> => {
    const docs = filterCommands(await services.commandDocs(), pattern);
    if (!docs.length) throw badArgument('regexp', `argument 'regexp' ('${pattern}') matches no command name nor module name`);
    return docs;
  };
  const write = (path: string, text: string) => writeOutputFile('file', path, services.config().dataDir, text);
  return {
    man: async () => renderManual(await services.commandDocs()),
    gen_markdown_doc_for_commands: async ({ file, regexp, examples }) => {
      const languages = parseExampleLanguages(examples);
      await write(file, markdownCommandsReference(await selected(regexp), languages));
    },
    gen_markdown_doc_for_tags: async ({ file }) => {
      await write(file, markdownTagsReference(await services.commandDocs()));
    },
    gen_html_doc_for_commands: async ({ file, regexp, examples }) => {
      const languages = parseExampleLanguages(examples);
      await write(file, htmlCommandsReference(await selected(regexp), languages));
    },
  };
}
