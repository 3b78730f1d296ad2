/**
 * Examples as an operator types them: the words of a `servicectl` command line, written so that
 * `parseArgv` (ctl/argv.ts) reads them back into the example's arguments, and the text the command prints.
 *
 * Words follow the argument forms: a scalar is one word; a list is the remaining words when it is the last
 * argument, else one comma-separated word; an object is `field=value` words when last, else one word
 * `f1=v1,f2=v2`; elements of a list of objects are `name=value` for {name, value} pairs. Whenever a value
 * would not survive that form (a comma inside a comma list, a nested list…), the argument is written as
 * one JSON word, which parseArgv also accepts.
 */
import { formatCliOutput } from '../ctl/output.js';
import type { ArgDecl, CommandDecl, CommandExample, FieldDecl, ResultDecl, ValueType } from '@service/plugin-api';
import { wireResult } from './example-data.js';

/**
 * An example as a terminal shows it: the command line, then what it prints. Command-line-only commands
 * print through their own output channel, not their result, so only their command line is shown.
 */
export function exampleTranscript(decl: CommandDecl, example: CommandExample): string[] {
  const lines = [`$ ${exampleCommandLine(decl, example.args)}`];
  if (decl.cliOnly) return lines;
  const printed = cliOutput(decl, example.result);
  if (printed) lines.push(...printed.split('\n'));
  else if (decl.result.type === 'rescode' && wireResult(decl, example.result) === 1) lines.push('(exit status 1)');
  return lines;
}

/** The example's arguments as command-line words, in declared order. */
export function exampleWords(decl: CommandDecl, args: Readonly<Record<string, unknown>>): string[] {
  return decl.args.flatMap((arg, i) => argumentWords(arg, args[arg.name], i === decl.args.length - 1));
}

/** `servicectl <command> <words…>`, each word quoted for a POSIX shell when it needs to be. */
export function exampleCommandLine(decl: CommandDecl, args: Readonly<Record<string, unknown>>): string {
  return ['servicectl', decl.name, ...exampleWords(decl, args)].map(shellQuote).join(' ');
}

export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

function isScalarType(type: ValueType): type is 'string' | 'integer' | 'boolean' {
  return typeof type === 'string';
}

function scalarText(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

function argumentWords(arg: ArgDecl, value: unknown, last: boolean): string[] {
  const type = arg.type;
  if (isScalarType(type)) return [scalarText(value)];
  const asJson = [JSON.stringify(value ?? null)];
  if ('list' in type) {
    if (!Array.isArray(value)) return asJson;
    const item = type.list;
    if (isScalarType(item)) {
      const texts = value.map(scalarText);
      if (last) {
        // A single word starting with `[` would be read as JSON.
        return texts.length === 1 && texts[0]!.startsWith('[') ? asJson : texts;
      }
      // An empty word is read as an empty list, so a list holding one empty string needs JSON.
      const lossy = texts.some((t) => t.includes(',')) || texts[0]?.startsWith('[') || (texts.length === 1 && texts[0] === '');
      return lossy ? asJson : [texts.join(',')];
    }
    if ('list' in item) return asJson;
    const elements = value.map((element) => elementText(item.object, element));
    if (elements.some((e) => e === undefined || (!last && e.includes(';')))) return asJson;
    return last ? (elements as string[]) : [elements.join(';')];
  }
  const text = objectFieldsText(type.object, value);
  if (text === undefined) return asJson;
  if (last && type.object.length > 1) return text.words;
  return [text.words.join(',')];
}

/** One element of a list of objects: `name=value` for a pair, else `f1=v1,f2=v2`; undefined when it cannot be. */
function elementText(fields: readonly FieldDecl[], value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const [first, second] = fields;
  if (fields.length === 2 && first!.type === 'string' && isScalarType(second!.type)) {
    const name = scalarText(record[first!.name]);
    const pairValue = scalarText(record[second!.name]);
    // parseArgv reads `name=…` or `value=…` at the start as field syntax, and splits at the first `=`.
    const ambiguous = name.includes('=') || fields.some((f) => `${name}=${pairValue}`.startsWith(`${f.name}=`));
    if (!ambiguous && !name.startsWith('{') && !name.startsWith('[')) return `${name}=${pairValue}`;
  }
  const text = objectFieldsText(fields, value);
  return text && !text.words.some((w) => w.includes(',')) ? text.words.join(',') : undefined;
}

function objectFieldsText(fields: readonly FieldDecl[], value: unknown): { words: string[] } | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const words: string[] = [];
  for (const field of fields) {
    const fieldValue = record[field.name];
    if (!isScalarType(field.type) || fieldValue === undefined) return undefined;
    const text = scalarText(fieldValue);
    if (text.includes(',')) return undefined;
    words.push(`${field.name}=${text}`);
  }
  return { words };
}

/** What servicectl prints for a result (the same function servicectl uses). */
export function cliOutput(decl: CommandDecl, value: unknown): string {
  return formatCliOutput(wireResult(decl, value), decl.result.type);
}
