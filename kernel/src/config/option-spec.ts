/**
 * Validation of typed option declarations (the declarations themselves are the plugin API's, see
 * @service/plugin-api config/options): every problem found, with its path, what was expected and a
 * did-you-mean.
 */
import { didYouMean, type OptionPath, type OptionSpec, type OptionsSchema, type InferOptions } from '@service/plugin-api';

export type { InferOption, InferOptions, InferValue, OptionPath, OptionSpec, OptionsSchema } from '@service/plugin-api';

// ---------------------------------------------------------------------------------------------
// Validation

export interface OptionIssue {
  path: OptionPath;
  message: string;
  /** Points at the key rather than the value (unknown options). */
  atKey?: boolean;
}

/** Thrown by validators and custom parsers; carries every problem found, not just the first. */
export class OptionIssues extends Error {
  constructor(readonly issues: OptionIssue[]) {
    super(issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join('\n'));
    this.name = 'OptionIssues';
  }

  static one(path: OptionPath, message: string, atKey = false): OptionIssues {
    return new OptionIssues([{ path, message, atKey }]);
  }
}

export function formatPath(path: OptionPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(part)) out += out ? `.${part}` : part;
    else out += `${out ? '.' : ''}${JSON.stringify(part)}`;
  }
  return out || '(top level)';
}

/** A short, readable rendering of a bad value for error messages. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** What a spec expects, in words. */
export function expectedOf(spec: OptionSpec): string {
  switch (spec.type) {
    case 'string':
      return spec.patternDoc ?? (spec.nonEmpty ? 'a non-empty string' : 'a string');
    case 'integer': {
      const range =
        spec.min !== undefined && spec.max !== undefined
          ? ` between ${spec.min} and ${spec.max}`
          : spec.min !== undefined
            ? ` of at least ${spec.min}`
            : spec.max !== undefined
              ? ` of at most ${spec.max}`
              : '';
      return `an integer${range}${spec.infinity ? " or 'infinity'" : ''}`;
    }
    case 'boolean':
      return 'true or false';
    case 'enum':
      return `one of ${spec.values.map((v) => `'${v}'`).join(', ')}`;
    case 'list':
      return `a list${spec.single ? ' (or a single value)' : ''}, each ${expectedOf(spec.of)}`;
    case 'map':
      return 'a map';
    case 'object':
      return 'a map of options';
    case 'custom':
      return spec.expected;
    case 'any':
      return 'a value';
  }
}

/**
 * Validates `value` against `spec` at `path`, applying defaults. Collects every issue found and throws
 * them together as `OptionIssues`.
 */
export function validateOption(spec: OptionSpec, value: unknown, path: OptionPath): unknown {
  const issues: OptionIssue[] = [];
  const result = check(spec, value, path, issues);
  if (issues.length) throw new OptionIssues(issues);
  return result;
}

/** Validates an options map (a module's options, or the top level) against a schema. */
export function validateOptions(schema: OptionsSchema, value: unknown, path: OptionPath): Record<string, unknown> {
  return validateOption({ type: 'object', fields: schema, doc: '' }, value ?? {}, path) as Record<string, unknown>;
}

function check(spec: OptionSpec, value: unknown, path: OptionPath, issues: OptionIssue[]): unknown {
  if (value === undefined || value === null) {
    if (spec.required) {
      issues.push({ path, message: `is required: expected ${expectedOf(spec)}` });
      return undefined;
    }
    return cloneDefault(spec.default);
  }
  const bad = () => {
    issues.push({ path, message: `expected ${expectedOf(spec)}, got ${describeValue(value)}` });
    return undefined;
  };
  switch (spec.type) {
    case 'string': {
      if (typeof value !== 'string' && typeof value !== 'number') return bad();
      const text = String(value);
      if (spec.nonEmpty && text === '') return bad();
      if (spec.pattern && !spec.pattern.test(text)) return bad();
      return text;
    }
    case 'integer': {
      if (spec.infinity && value === 'infinity') return Infinity;
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) return bad();
      if ((spec.min !== undefined && value < spec.min) || (spec.max !== undefined && value > spec.max)) return bad();
      return value;
    }
    case 'boolean':
      return typeof value === 'boolean' ? value : bad();
    case 'enum': {
      const text = typeof value === 'string' ? value : undefined;
      if (text !== undefined && spec.values.includes(text)) return text;
      const hint = text !== undefined ? didYouMean(text, spec.values) : '';
      issues.push({ path, message: `expected ${expectedOf(spec)}, got ${describeValue(value)}${hint}` });
      return undefined;
    }
    case 'list': {
      const items = Array.isArray(value) ? value : spec.single ? [value] : undefined;
      if (!items) return bad();
      if (spec.nonEmpty && items.length === 0) {
        issues.push({ path, message: `must not be empty: expected ${expectedOf(spec)}` });
        return undefined;
      }
      return items.map((item, i) => check(spec.of, item, Array.isArray(value) ? [...path, i] : path, issues));
    }
    case 'map': {
      if (!isPlainObject(value)) return bad();
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        if (spec.keyPattern && !spec.keyPattern.test(key)) {
          issues.push({ path: [...path, key], message: `invalid name: expected ${spec.keyDoc ?? 'a valid name'}`, atKey: true });
          continue;
        }
        out[key] = check(spec.values, item, [...path, key], issues);
      }
      return out;
    }
    case 'object': {
      if (!isPlainObject(value)) return bad();
      const out: Record<string, unknown> = {};
      const known = Object.keys(spec.fields);
      for (const key of Object.keys(value)) {
        if (!Object.hasOwn(spec.fields, key)) {
          issues.push({ path: [...path, key], message: `unknown option${didYouMean(key, known)}`, atKey: true });
        }
      }
      for (const [key, fieldSpec] of Object.entries(spec.fields)) {
        const checked = check(fieldSpec, value[key], [...path, key], issues);
        if (checked !== undefined) out[key] = checked;
      }
      return out;
    }
    case 'custom':
      try {
        return spec.parse(value, path);
      } catch (err) {
        if (err instanceof OptionIssues) issues.push(...err.issues);
        else issues.push({ path, message: `expected ${spec.expected}: ${(err as Error).message}` });
        return undefined;
      }
    case 'any':
      return value;
  }
}

function cloneDefault(value: unknown): unknown {
  return value !== null && typeof value === 'object' ? structuredClone(value) : value;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// Did you mean

/** Did-you-mean lives in the plugin API, for modules' errors too. */
export { closest, didYouMean, editDistance } from '@service/plugin-api';
