/**
 * The arguments of a POST body: a JSON object whose keys are argument names. JSON.parse keeps only the
 * last of duplicate keys, so the top-level keys are also scanned from the text to refuse a duplicate
 * instead of silently picking one.
 */
import { CommandError, badArgument } from '@service/plugin-api';

export function parseJsonArgs(text: string): Array<[string, unknown]> {
  if (text.trim() === '') return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CommandError('bad_request', `invalid JSON in the request body: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const got = Array.isArray(value) ? 'a list' : value === null ? 'null' : `a ${typeof value}`;
    throw new CommandError('bad_request', `the request body must be a JSON object of arguments, like {"host": "localhost"}; got ${got}`);
  }
  const entries = Object.entries(value);
  const keys = topLevelKeys(text);
  if (keys.length !== entries.length) {
    const seen = new Set<string>();
    for (const key of keys) {
      if (seen.has(key)) throw badArgument(key, `duplicate argument '${key}' in the request body`);
      seen.add(key);
    }
  }
  return entries;
}

/** The keys of the top-level object of a valid JSON text, in order, duplicates included. */
export function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (depth === 1 && expectKey) {
        keys.push(JSON.parse(text.slice(start, i + 1)) as string);
        expectKey = false;
      }
    } else if (c === '{' || c === '[') {
      depth++;
      if (depth === 1) expectKey = true;
    } else if (c === '}' || c === ']') depth--;
    else if (c === ',' && depth === 1) expectKey = true;
  }
  return keys;
}
