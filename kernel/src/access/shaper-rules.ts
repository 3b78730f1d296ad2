/**
 * ejabberd's `shaper` and `shaper_rules` sections, with ejabberd.yml's forms:
 *
 *   shaper:
 *     normal: 1000                              # bytes per second (the burst is one second's worth)
 *     fast: {rate: 50000, burst_size: 100000}
 *   shaper_rules:
 *     max_user_sessions: 10                     # one value for everyone
 *     c2s_shaper:                               # first matching entry wins, like access rules
 *       none: admin
 *       normal: all
 *     max_user_offline_messages:
 *       - 5000: admin
 *       - 100                                   # a bare value applies to everyone
 *
 * A rule's value is a number (`infinity` allowed), `none` (no shaper), or a shaper's name. This file parses
 * and matches; the token bucket that applies a shaper to a connection is xmpp/c2s/shaper.ts, and the checks
 * across sections (an ACL or shaper a rule names must exist) are in access-control.ts.
 */
import { OptionIssues, isPlainObject, type OptionIssue, type OptionPath } from '../config/option-spec.js';
import { collect, type AclEnvironment, type AclSubject } from './acl.js';
import { conditionMatches, parseConditions, type Condition } from './access-rules.js';

/** A token bucket's parameters: bytes per second, and how many bytes may come at once. */
export interface ShaperDefinition {
  readonly rate: number;
  readonly burst: number;
}

export type ShaperDefinitions = ReadonlyMap<string, ShaperDefinition>;

/** A number (Infinity for `infinity`), or a name: `none` or a shaper's. */
export type ShaperRuleValue = number | string;

export interface ShaperRuleEntry {
  readonly value: ShaperRuleValue;
  readonly conditions: readonly Condition[];
  /** Where the value is written, for errors about it. */
  readonly path: OptionPath;
  /** The value is a key (`normal: all`), not a value (`c2s_shaper: normal`): errors point at the key. */
  readonly atKey: boolean;
}

export interface ShaperRule {
  readonly entries: readonly ShaperRuleEntry[];
}

export type ShaperRuleDefinitions = ReadonlyMap<string, ShaperRule>;

const NAME = /^[A-Za-z][A-Za-z0-9_.-]*$/;

export function parseShaperSection(raw: unknown, path: OptionPath): ShaperDefinitions {
  const out = new Map<string, ShaperDefinition>();
  if (raw === undefined || raw === null) return out;
  if (!isPlainObject(raw)) throw OptionIssues.one(path, 'expected a map of shaper names to rates, like normal: 1000');
  const issues: OptionIssue[] = [];
  for (const [name, value] of Object.entries(raw)) {
    const at = [...path, name];
    if (name === 'none' || name === 'infinity') {
      issues.push({ path: at, message: `'${name}' is built in (no shaper) and cannot be defined`, atKey: true });
      continue;
    }
    if (!NAME.test(name)) {
      issues.push({ path: at, message: 'expected a shaper name (letters, digits, _ . -, starting with a letter)', atKey: true });
      continue;
    }
    collect(issues, () => out.set(name, parseShaper(value, at)));
  }
  if (issues.length) throw new OptionIssues(issues);
  return out;
}

function parseShaper(value: unknown, path: OptionPath): ShaperDefinition {
  if (!isPlainObject(value)) {
    const rate = positiveInteger(value, path, 'a rate in bytes per second');
    return { rate, burst: rate };
  }
  const issues: OptionIssue[] = [];
  for (const key of Object.keys(value)) {
    if (key !== 'rate' && key !== 'burst_size') issues.push({ path: [...path, key], message: `unknown option '${key}'; expected rate and burst_size`, atKey: true });
  }
  let rate = 0;
  let burst: number | undefined;
  if (value.rate === undefined) issues.push({ path, message: 'rate is required: bytes per second, like {rate: 1000}' });
  else collect(issues, () => (rate = positiveInteger(value.rate, [...path, 'rate'], 'a rate in bytes per second')));
  if (value.burst_size !== undefined) collect(issues, () => (burst = positiveInteger(value.burst_size, [...path, 'burst_size'], 'a burst size in bytes')));
  if (issues.length) throw new OptionIssues(issues);
  return { rate, burst: burst ?? rate };
}

function positiveInteger(value: unknown, path: OptionPath, what: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  throw OptionIssues.one(path, `expected ${what}, a positive integer, got ${JSON.stringify(value)}`);
}

export function parseShaperRulesSection(raw: unknown, path: OptionPath): ShaperRuleDefinitions {
  const out = new Map<string, ShaperRule>();
  if (raw === undefined || raw === null) return out;
  if (!isPlainObject(raw)) throw OptionIssues.one(path, 'expected a map of rule names to values, like max_user_sessions: 10');
  const issues: OptionIssue[] = [];
  for (const [name, value] of Object.entries(raw)) collect(issues, () => out.set(name, parseShaperRule(value, [...path, name])));
  if (issues.length) throw new OptionIssues(issues);
  return out;
}

const EVERYONE: readonly Condition[] = [{ acl: 'all', path: [] }];

/**
 * One rule: a bare value, a map `{value: conditions}`, or a list of those and bare values. The configuration
 * loader gives a rule's map as a Map, in the file's order (a plain object would put number keys first).
 */
export function parseShaperRule(value: unknown, path: OptionPath): ShaperRule {
  const issues: OptionIssue[] = [];
  const entries: ShaperRuleEntry[] = [];
  const entry = (rawValue: unknown, conditions: unknown, valuePath: OptionPath, conditionsPath: OptionPath, atKey: boolean) => {
    collect(issues, () => {
      const parsed = parseValue(rawValue, valuePath, atKey);
      entries.push({ value: parsed, conditions: conditions === undefined ? EVERYONE : parseConditions(conditions, conditionsPath), path: valuePath, atKey });
    });
  };
  const fromMap = (map: Record<string, unknown> | ReadonlyMap<unknown, unknown>, at: OptionPath) => {
    for (const [k, v] of map instanceof Map ? map : Object.entries(map)) entry(k, v, [...at, String(k)], [...at, String(k)], true);
  };
  if (isPlainObject(value) || value instanceof Map) fromMap(value, path);
  else if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (isPlainObject(item)) fromMap(item, [...path, i]);
      else entry(item, undefined, [...path, i], [...path, i], false);
    });
  } else entry(value, undefined, path, path, false);
  if (entries.length === 0 && issues.length === 0) issues.push({ path, message: 'must not be empty: expected a value, or entries like normal: all' });
  if (issues.length) throw new OptionIssues(issues);
  return { entries };
}

function parseValue(value: unknown, path: OptionPath, atKey: boolean): ShaperRuleValue {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string') {
    if (/^\d+$/.test(value) && Number.isSafeInteger(Number(value))) return Number(value);
    if (value === 'infinity') return Infinity;
    if (NAME.test(value)) return value;
  }
  throw new OptionIssues([{ path, message: `expected a number, infinity, none or a shaper name, got ${JSON.stringify(value)}`, atKey }]);
}

/** The value of the first entry whose conditions all match; undefined when none does. */
export function matchShaperRule(rule: ShaperRule, subject: AclSubject, env: AclEnvironment): ShaperRuleValue | undefined {
  for (const entry of rule.entries) {
    if (entry.conditions.every((c) => conditionMatches(c, subject, env))) return entry.value;
  }
  return undefined;
}
