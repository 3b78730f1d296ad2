/**
 * The examples every document shows for a command: its declared ones, or, for a declaration without any
 * (plugins often have none), one made up from the argument types — the way ejabberd's generator does — so
 * that every command still shows how it is called.
 */
import { formatResult } from '../commands/result.js';
import type { CommandDecl, CommandExample, ResultType, ValueType } from '@service/plugin-api';

export interface DocExample extends CommandExample {
  /** Made up from the declared types, not written by the command's author. */
  readonly illustrative: boolean;
}

export function commandExamples(decl: CommandDecl): DocExample[] {
  if (decl.examples?.length) return decl.examples.map((example) => ({ ...example, illustrative: false }));
  const args = Object.fromEntries(decl.args.map((arg) => [arg.name, arg.example ?? placeholder(arg.type, arg.name)]));
  return [{ args, result: placeholderResult(decl.result.type, decl.result.name), illustrative: true }];
}

function placeholder(type: ValueType, name: string): unknown {
  if (type === 'string') return name;
  if (type === 'integer') return 1;
  if (type === 'boolean') return true;
  if ('list' in type) return [placeholder(type.list, type.item ?? name)];
  return Object.fromEntries(type.object.map((field) => [field.name, placeholder(field.type, field.name)]));
}

function placeholderResult(type: ResultType, name: string): unknown {
  if (type === 'rescode') return 0;
  if (type === 'restuple') return 'Success';
  return placeholder(type, name);
}

/**
 * The result as the frontends send it: ST as 0 or 1, objects with their declared fields. An example that
 * does not fit its declaration is shown as written (the example tests catch those).
 */
export function wireResult(decl: CommandDecl, value: unknown): unknown {
  try {
    return formatResult(decl.name, decl.result, value);
  } catch {
    return value;
  }
}
