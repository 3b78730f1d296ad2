/**
 * Turns a handler's return value into the declared result: ST (`rescode`) becomes 0 or 1, RS
 * (`restuple`) a string, objects keep exactly their declared fields. A value that does not fit the
 * declaration is a bug in the command, reported as an internal fault rather than sent on.
 */
import { CommandError } from '@service/plugin-api';
import type { ResultDecl, ValueType } from '@service/plugin-api';
import { describeType } from './coerce.js';

export function formatResult(command: string, result: ResultDecl, value: unknown): unknown {
  if (result.type === 'rescode') {
    if (value === undefined || value === null || value === true || value === 0) return 0;
    if (value === false || value === 1) return 1;
    throw mismatch(command, 'rescode (true/false)', value);
  }
  if (result.type === 'restuple') {
    if (typeof value === 'string') return value;
    throw mismatch(command, 'restuple (a string)', value);
  }
  return shape(command, result.type, value, result.name);
}

function shape(command: string, type: ValueType, value: unknown, path: string): unknown {
  if (type === 'string') {
    if (typeof value === 'string') return value;
  } else if (type === 'integer') {
    if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  } else if (type === 'boolean') {
    if (typeof value === 'boolean') return value;
  } else if ('list' in type) {
    if (Array.isArray(value)) {
      // Lists of scalars (100 000 user names) are checked in place and returned as they are.
      if (typeof type.list === 'string') {
        const kind = type.list === 'integer' ? 'number' : type.list;
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          if (typeof item !== kind || (kind === 'number' && !Number.isSafeInteger(item))) throw mismatch(command, `${type.list} at ${path}[${i}]`, item);
        }
        return value;
      }
      return value.map((item, i) => shape(command, type.list, item, `${path}[${i}]`));
    }
  } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const field of type.object) out[field.name] = shape(command, field.type, record[field.name], `${path}.${field.name}`);
    return out;
  }
  throw mismatch(command, `${describeType(type)} at ${path}`, value);
}

function mismatch(command: string, expected: string, value: unknown): CommandError {
  const got = value === undefined ? 'nothing' : Array.isArray(value) ? 'a list' : typeof value;
  return new CommandError('internal', `command ${command} returned ${got} where its declaration says ${expected}`);
}
