/**
 * Argument validation and coercion, derived from the declaration. Strict by design: the one leniency is
 * that an integer may arrive as a numeric string (query strings and the command line carry only text).
 * Every refusal names the argument and what was expected.
 */
import { closest } from '../config/option-spec.js';
import { badArgument, type ArgInput, type CommandDecl, type FieldDecl, type ValueType } from '@service/plugin-api';

export type { ArgInput } from '@service/plugin-api';

export function describeType(type: ValueType): string {
  if (type === 'string' || type === 'integer' || type === 'boolean') return type;
  if ('list' in type) return `list of ${describeType(type.list)}`;
  return `object {${type.object.map((f) => `${f.name}: ${describeType(f.type)}`).join(', ')}}`;
}

function entriesOf(input: ArgInput): Iterable<readonly [string, unknown]> {
  return Symbol.iterator in input ? (input as Iterable<readonly [string, unknown]>) : Object.entries(input);
}

export function coerceArgs(decl: CommandDecl, input: ArgInput): Record<string, unknown> {
  const given = new Map<string, unknown>();
  const known = decl.args.map((a) => a.name);
  for (const [rawName, value] of entriesOf(input)) {
    const name = decl.argsRename?.[rawName] ?? rawName;
    if (!known.includes(name)) {
      const hint = closest(name, known, 1)[0];
      const expected = known.length ? `it takes ${known.join(', ')}` : 'it takes no arguments';
      throw badArgument(name, `unknown argument '${rawName}' for ${decl.name}${hint ? ` (did you mean '${hint}'?)` : ''}: ${expected}`);
    }
    if (given.has(name)) throw badArgument(name, `duplicate argument '${name}' for ${decl.name}`);
    given.set(name, value);
  }
  const out: Record<string, unknown> = {};
  for (const arg of decl.args) {
    if (!given.has(arg.name) || given.get(arg.name) === undefined) {
      throw badArgument(arg.name, `missing argument '${arg.name}' for ${decl.name}: expected ${describeType(arg.type)} (${arg.desc})`);
    }
    out[arg.name] = coerceValue(arg.type, given.get(arg.name), arg.name);
  }
  return out;
}

function show(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

const INTEGER_TEXT = /^-?\d{1,16}$/;

export function coerceValue(type: ValueType, value: unknown, path: string): unknown {
  const root = path.split(/[.[]/)[0]!;
  const fail = (expected: string) => badArgument(root, `argument '${path}' must be ${expected}, got ${show(value)}`);
  if (type === 'string') {
    if (typeof value !== 'string') throw fail('a string');
    return value;
  }
  if (type === 'integer') {
    if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
    if (typeof value === 'string' && INTEGER_TEXT.test(value.trim())) {
      const parsed = Number(value.trim());
      if (Number.isSafeInteger(parsed)) return parsed;
    }
    throw fail('an integer');
  }
  if (type === 'boolean') {
    if (typeof value === 'boolean') return value;
    if (value === 'true' || value === 'false') return value === 'true';
    throw fail('true or false');
  }
  if ('list' in type) {
    // ejabberd also takes a JSON object for a list of {name, value} pairs: {"members_only": "true"}.
    if (isPairObjectList(type) && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const [k, v] = (type.list as { object: readonly FieldDecl[] }).object;
      return Object.entries(value).map(([key, item], i) => ({
        [k!.name]: key,
        [v!.name]: coerceValue(v!.type, item, `${path}[${i}].${v!.name}`),
      }));
    }
    if (!Array.isArray(value)) throw fail(`a ${describeType(type)}`);
    return value.map((item, i) => coerceValue(type.list, item, `${path}[${i}]`));
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw fail(`an ${describeType(type)}`);
  const record = value as Record<string, unknown>;
  const fields = type.object.map((f) => f.name);
  for (const key of Object.keys(record)) {
    if (!fields.includes(key)) throw badArgument(root, `argument '${path}' has an unknown field '${key}': expected ${fields.join(', ')}`);
  }
  const out: Record<string, unknown> = {};
  for (const field of type.object) {
    if (record[field.name] === undefined) throw badArgument(root, `argument '${path}' is missing the field '${field.name}' (${describeType(field.type)})`);
    out[field.name] = coerceValue(field.type, record[field.name], `${path}.${field.name}`);
  }
  return out;
}

function isPairObjectList(type: { list: ValueType }): boolean {
  const item = type.list;
  return typeof item === 'object' && 'object' in item && item.object.length === 2 && item.object[0]!.type === 'string';
}
