/**
 * Access rules, with ejabberd's forms and semantics:
 *
 *   access_rules:
 *     c2s:
 *       deny: blocked        # entries are tried in order; the first whose conditions all match decides
 *       allow: all
 *     api:
 *       - allow:
 *           - acl: admin     # several conditions in one entry must ALL match
 *           - ip: 127.0.0.1
 *
 * A condition is an ACL name or an inline ACL rule. When no entry matches, the answer is deny. The rules
 * `all` (allow everyone) and `none` (deny everyone) are built in.
 */
import { OptionIssues, isPlainObject, type OptionIssue, type OptionPath } from '../config/option-spec.js';
import { collect, isAclRuleType, parseAclRules, type AclEnvironment, type AclRule, type AclSubject } from './acl.js';

export type AccessAction = 'allow' | 'deny';

/** One condition of an entry: a named ACL (checked against the acl section) or an inline rule. */
export type Condition = { readonly acl: string; readonly path: OptionPath } | { readonly rule: AclRule };

export interface AccessEntry {
  readonly action: AccessAction;
  readonly conditions: readonly Condition[];
}

export interface AccessRule {
  readonly entries: readonly AccessEntry[];
}

export type AccessRuleDefinitions = ReadonlyMap<string, AccessRule>;

export function parseAccessRulesSection(raw: unknown, path: OptionPath): AccessRuleDefinitions {
  const out = new Map<string, AccessRule>();
  if (raw === undefined || raw === null) return out;
  if (!isPlainObject(raw)) throw OptionIssues.one(path, 'expected a map of rule names to allow/deny entries');
  const issues: OptionIssue[] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (name === 'all' || name === 'none') {
      issues.push({ path: [...path, name], message: `'${name}' is built in and cannot be redefined`, atKey: true });
      continue;
    }
    collect(issues, () => out.set(name, parseAccessRule(value, [...path, name])));
  }
  if (issues.length) throw new OptionIssues(issues);
  return out;
}

/** One rule: a map `{allow: …, deny: …}` (order kept) or a list of single-key maps or bare `allow`/`deny`. */
export function parseAccessRule(value: unknown, path: OptionPath): AccessRule {
  const issues: OptionIssue[] = [];
  const entries: AccessEntry[] = [];
  const pairs: Array<[string, unknown, OptionPath]> = [];
  if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) pairs.push([k, v, [...path, k]]);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (typeof item === 'string') pairs.push([item, 'all', [...path, i]]);
      else if (isPlainObject(item)) for (const [k, v] of Object.entries(item)) pairs.push([k, v, [...path, i, k]]);
      else issues.push({ path: [...path, i], message: 'expected allow: <acl> or deny: <acl>' });
    });
  } else {
    throw OptionIssues.one(path, 'expected allow/deny entries, like allow: admin');
  }
  if (pairs.length === 0 && issues.length === 0) issues.push({ path, message: 'must not be empty: expected entries like allow: admin' });
  for (const [action, conditions, at] of pairs) {
    if (action !== 'allow' && action !== 'deny') {
      issues.push({ path: at, message: `expected 'allow' or 'deny', got '${action}'`, atKey: true });
      continue;
    }
    collect(issues, () => entries.push({ action, conditions: parseConditions(conditions, at) }));
  }
  if (issues.length) throw new OptionIssues(issues);
  return { entries };
}

/** The value of `allow:`/`deny:`: an ACL name, an inline rule map, or a list of those. */
export function parseConditions(value: unknown, path: OptionPath): Condition[] {
  const issues: OptionIssue[] = [];
  const out: Condition[] = [];
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) throw OptionIssues.one(path, 'must not be empty: expected an ACL name or rules');
  items.forEach((item, i) => {
    const at = Array.isArray(value) ? [...path, i] : path;
    if (typeof item === 'string') out.push({ acl: item, path: at });
    else if (isPlainObject(item)) {
      for (const [type, spec] of Object.entries(item)) {
        if (type === 'acl') {
          for (const [j, name] of (Array.isArray(spec) ? spec : [spec]).entries()) {
            if (typeof name === 'string') out.push({ acl: name, path: Array.isArray(spec) ? [...at, type, j] : [...at, type] });
            else issues.push({ path: [...at, type], message: 'expected an ACL name' });
          }
        } else if (isAclRuleType(type)) {
          collect(issues, () => out.push(...parseAclRules(type, spec, [...at, type]).map((rule) => ({ rule }))));
        } else {
          collect(issues, () => parseAclRules(type, spec, [...at, type]));
        }
      }
    } else issues.push({ path: at, message: 'expected an ACL name or a rule like ip: 127.0.0.1' });
  });
  if (issues.length) throw new OptionIssues(issues);
  return out;
}

export function conditionMatches(condition: Condition, subject: AclSubject, env: AclEnvironment): boolean {
  return 'acl' in condition ? env.matchNamed(condition.acl, subject) : condition.rule.matches(subject, env);
}

export function matchAccessRule(rule: AccessRule, subject: AclSubject, env: AclEnvironment): AccessAction {
  for (const entry of rule.entries) {
    if (entry.conditions.length > 0 && entry.conditions.every((c) => conditionMatches(c, subject, env))) return entry.action;
  }
  return 'deny';
}

/** Every named ACL a rule refers to, with where, so references can be checked once at load. */
export function* aclReferences(rule: AccessRule): Iterable<{ acl: string; path: OptionPath }> {
  for (const entry of rule.entries) {
    for (const c of entry.conditions) if ('acl' in c) yield c;
  }
}
