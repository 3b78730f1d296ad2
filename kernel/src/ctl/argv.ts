/**
 * Command-line arguments: positional, in declared order, mapped onto the declaration. The forms:
 *
 *   scalar (string, integer, boolean)   one word
 *   list of scalars                     last argument: every remaining word; otherwise one word, comma-separated
 *   object                              `field=value` words (last argument) or one word `f1=v1,f2=v2`; or JSON
 *   list of objects                     each element as above: words (last argument) or one word with elements
 *                                       separated by `;` — for {name, value} pairs `name=value` is enough; or JSON
 *
 * A word that starts with `[` or `{` is read as JSON for a list or object argument. The values are handed to
 * the bus as strings (integers included), which validates and coerces them as for every frontend.
 */
import { CommandError } from '@service/plugin-api';
import type { ArgDecl, CommandDecl, FieldDecl, ValueType } from '@service/plugin-api';

export class UsageError extends CommandError {
  constructor(message: string, argument?: string) {
    super('bad_argument', message, argument);
    this.name = 'UsageError';
  }
}

function isPairObject(type: ValueType): type is { object: readonly [FieldDecl, FieldDecl] } {
  return typeof type === 'object' && 'object' in type && type.object.length === 2 && type.object[0]!.type === 'string';
}

/** `servicectl <command> <arg1> <arg2> <list>...`: the synopsis line of a command. */
export function synopsis(decl: CommandDecl): string {
  const parts = decl.args.map((arg, i) => {
    const last = i === decl.args.length - 1;
    if (typeof arg.type === 'string') return `<${arg.name}>`;
    if ('list' in arg.type) return last ? `<${arg.name}>...` : `<${arg.name},...>`;
    return `<${arg.name}>`;
  });
  return ['servicectl', decl.name, ...parts].join(' ');
}

/** How to write one argument on the command line, for help. */
export function argumentForm(decl: CommandDecl, arg: ArgDecl): string {
  const last = decl.args[decl.args.length - 1] === arg;
  const type = arg.type;
  if (typeof type === 'string') return type === 'integer' ? 'an integer' : type === 'boolean' ? 'true or false' : 'one word (quote it if it has spaces)';
  if ('list' in type) {
    const item = type.list;
    if (typeof item === 'string') return last ? 'the remaining words, one element each' : 'one word, elements separated by commas';
    if ('list' in item) return 'JSON';
    const element = isPairObject(item) ? `${item.object[0]!.name}=${item.object[1]!.name}` : item.object.map((f) => `${f.name}=…`).join(',');
    return last ? `the remaining words, one element each: ${element} (or JSON)` : `one word, elements separated by ';': ${element} (or JSON)`;
  }
  const fields = type.object.map((f) => `${f.name}=…`);
  return last ? `${fields.join(' ')} as separate words (or JSON)` : `one word: ${fields.join(',')} (or JSON)`;
}

export function parseArgv(decl: CommandDecl, argv: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let i = 0;
  const usage = () => `usage: ${synopsis(decl)}`;
  decl.args.forEach((arg, index) => {
    const last = index === decl.args.length - 1;
    const type = arg.type;
    if (typeof type === 'object' && 'list' in type && last) {
      out[arg.name] = parseListWords(arg, argv.slice(i));
      i = argv.length;
      return;
    }
    if (typeof type === 'object' && 'object' in type && last && argv.length - i > 1) {
      out[arg.name] = parseObjectWords(arg, argv.slice(i));
      i = argv.length;
      return;
    }
    if (i >= argv.length) throw new UsageError(`missing argument <${arg.name}> (${arg.desc}); ${usage()}`, arg.name);
    const word = argv[i++]!;
    if (typeof type === 'string') out[arg.name] = word;
    else if ('list' in type) out[arg.name] = parseListWord(arg, word);
    else out[arg.name] = parseObjectWord(arg, type.object, word);
  });
  if (i < argv.length) {
    const extra = argv.slice(i).map((w) => JSON.stringify(w)).join(' ');
    throw new UsageError(`too many arguments for ${decl.name}: ${extra}; ${usage()}`);
  }
  return out;
}

function json(arg: ArgDecl, word: string): unknown {
  try {
    return JSON.parse(word);
  } catch (err) {
    throw new UsageError(`argument <${arg.name}>: invalid JSON: ${(err as Error).message}`, arg.name);
  }
}

function looksJson(word: string): boolean {
  return word.startsWith('[') || word.startsWith('{');
}

function parseListWords(arg: ArgDecl, words: readonly string[]): unknown[] {
  const item = (arg.type as { list: ValueType }).list;
  if (words.length === 1 && words[0]!.startsWith('[')) return json(arg, words[0]!) as unknown[];
  if (typeof item === 'string') return [...words];
  if ('list' in item) return words.map((w) => json(arg, w));
  return words.map((w) => (looksJson(w) ? json(arg, w) : parseElement(arg, item.object, w, ',')));
}

function parseListWord(arg: ArgDecl, word: string): unknown[] {
  if (word.startsWith('[')) return json(arg, word) as unknown[];
  if (word === '') return [];
  const item = (arg.type as { list: ValueType }).list;
  if (typeof item === 'string') return word.split(',');
  if ('list' in item) throw new UsageError(`argument <${arg.name}> is a list of lists: give it as JSON`, arg.name);
  return word.split(';').map((element) => parseElement(arg, item.object, element, ','));
}

function parseObjectWords(arg: ArgDecl, words: readonly string[]): Record<string, unknown> {
  if (words.length === 1 && looksJson(words[0]!)) return json(arg, words[0]!) as Record<string, unknown>;
  return Object.fromEntries(words.map((w) => splitPair(arg, w)));
}

function parseObjectWord(arg: ArgDecl, fields: readonly FieldDecl[], word: string): unknown {
  if (looksJson(word)) return json(arg, word);
  return parseElement(arg, fields, word, ',');
}

/** One object: `name=value` for a {name, value} pair, else `field=value` items joined by `separator`. */
function parseElement(arg: ArgDecl, fields: readonly FieldDecl[], text: string, separator: string): Record<string, unknown> {
  if (fields.length === 2 && fields[0]!.type === 'string' && !fields.some((f) => text.startsWith(`${f.name}=`))) {
    const eq = text.indexOf('=');
    if (eq === -1) throw new UsageError(`argument <${arg.name}>: expected ${fields[0]!.name}=${fields[1]!.name}, got ${JSON.stringify(text)}`, arg.name);
    return { [fields[0]!.name]: text.slice(0, eq), [fields[1]!.name]: text.slice(eq + 1) };
  }
  return Object.fromEntries(text.split(separator).map((item) => splitPair(arg, item)));
}

function splitPair(arg: ArgDecl, item: string): [string, string] {
  const eq = item.indexOf('=');
  if (eq <= 0) throw new UsageError(`argument <${arg.name}>: expected field=value, got ${JSON.stringify(item)}`, arg.name);
  return [item.slice(0, eq), item.slice(eq + 1)];
}
