/**
 * api_permissions, with ejabberd's semantics:
 *
 *   api_permissions:
 *     "public commands":
 *       from: mod_http_api            # frontends (or {tag: name}); absent = every frontend
 *       who:
 *         ip: 127.0.0.0/8             # ACL rules, acl: name, access: rule, oauth: {scope, …}; any may match
 *       what:
 *         - status                    # command names, "*", "[tag:name]", and "!" to exclude
 *         - connected_users_number
 *
 * Groups are tried in order and the first that matches allows the call; no match denies it. For a call
 * authenticated by an OAuth token only `oauth` clauses count; for any other call only the others do.
 * Unless a group named "console commands" is configured, servicectl may run every command, as in ejabberd.
 */
import { OptionIssues, didYouMean, isPlainObject, type OptionIssue, type OptionPath } from '../config/option-spec.js';
import { collect, isAclRuleType, parseAclRules } from './acl.js';
import { parseAccessRule, parseConditions, type AccessRule, type Condition } from './access-rules.js';

/**
 * Frontends the kernel itself has (servicectl; the web admin's name, reserved). Modules declare theirs
 * (mod_http_api, service_xmlrpc); load.ts checks `from:` against both once the modules are known.
 */
export const KERNEL_FRONTENDS = ['service_ctl', 'service_web_admin'] as const;
const FRONTEND_NAME = /^[a-z][a-z0-9_]*$/;
export const CONSOLE_GROUP = 'console commands';

/** A non-OAuth `who` clause. */
export type WhoRule =
  | { readonly kind: 'access'; readonly rule: string | AccessRule; readonly path: OptionPath }
  | { readonly kind: 'condition'; readonly condition: Condition; readonly text: string };

export type WhoClause = WhoRule | { readonly kind: 'oauth'; readonly scopes: readonly string[]; readonly rules: readonly WhoRule[] };

type Pattern = { readonly name: string } | { readonly tag: string };
type PatternSet = 'all' | 'none' | readonly Pattern[];

export interface WhatSpec {
  readonly add: PatternSet;
  readonly del: PatternSet;
}

export interface ApiPermissionGroup {
  readonly name: string;
  readonly from: { readonly frontends: readonly string[]; readonly tags: readonly string[] };
  readonly who: readonly WhoClause[];
  readonly what: WhatSpec;
}

export function parseApiPermissionsSection(raw: unknown, path: OptionPath): ApiPermissionGroup[] {
  if (!isPlainObject(raw)) throw OptionIssues.one(path, 'expected a map of group names to {from, who, what}');
  const issues: OptionIssue[] = [];
  const groups: ApiPermissionGroup[] = [];
  for (const [name, value] of Object.entries(raw)) {
    collect(issues, () => groups.push(parseGroup(name, value, [...path, name])));
  }
  if (issues.length) throw new OptionIssues(issues);
  return groups;
}

function parseGroup(name: string, value: unknown, path: OptionPath): ApiPermissionGroup {
  if (!isPlainObject(value)) throw OptionIssues.one(path, 'expected a map with from, who and what');
  const issues: OptionIssue[] = [];
  for (const key of Object.keys(value)) {
    if (!['from', 'who', 'what'].includes(key)) issues.push({ path: [...path, key], message: `unknown option${didYouMean(key, ['from', 'who', 'what'])}`, atKey: true });
  }
  let from: ApiPermissionGroup['from'] = { frontends: [], tags: [] };
  let who: WhoClause[] = [];
  let what: WhatSpec = { add: 'none', del: 'none' };
  collect(issues, () => (from = parseFrom(value.from, [...path, 'from'])));
  if (value.who === undefined) issues.push({ path: [...path, 'who'], message: 'is required: expected who may run the commands (an ACL name, ip:, user:, access:, oauth:)' });
  else collect(issues, () => (who = parseWho(value.who, [...path, 'who'], true)));
  if (value.what === undefined) issues.push({ path: [...path, 'what'], message: 'is required: expected command names, "*" or "[tag:name]"' });
  else collect(issues, () => (what = parseWhat(value.what, [...path, 'what'])));
  if (issues.length) throw new OptionIssues(issues);
  return { name, from, who, what };
}

function parseFrom(value: unknown, path: OptionPath): ApiPermissionGroup['from'] {
  const frontends: string[] = [];
  const tags: string[] = [];
  if (value === undefined || value === null) return { frontends, tags };
  const issues: OptionIssue[] = [];
  const items = Array.isArray(value) ? value : [value];
  items.forEach((item, i) => {
    const at = Array.isArray(value) ? [...path, i] : path;
    if (typeof item === 'string' && FRONTEND_NAME.test(item)) {
      frontends.push(item);
    } else if (isPlainObject(item) && typeof item.tag === 'string' && Object.keys(item).length === 1) {
      tags.push(item.tag);
    } else issues.push({ path: at, message: 'expected a frontend name (mod_http_api, service_ctl, service_xmlrpc…) or {tag: name}' });
  });
  if (issues.length) throw new OptionIssues(issues);
  return { frontends, tags };
}

/** Splits a `who` value (map, list of single-key maps, or names) into key/value pairs, as ejabberd does. */
function pairsOf(value: unknown, path: OptionPath): Array<[string, unknown, OptionPath]> {
  const pairs: Array<[string, unknown, OptionPath]> = [];
  const add = (item: unknown, at: OptionPath) => {
    if (typeof item === 'string') pairs.push(['acl', item, at]);
    else if (isPlainObject(item)) for (const [k, v] of Object.entries(item)) pairs.push([k, v, [...at, k]]);
    else throw OptionIssues.one(at, 'expected an ACL name, or a rule like ip: 127.0.0.1, access: <rule>, oauth: {scope: …}');
  };
  if (Array.isArray(value)) value.forEach((item, i) => add(item, [...path, i]));
  else add(value, path);
  return pairs;
}

function parseWho(value: unknown, path: OptionPath, allowOauth: boolean): WhoClause[] {
  const issues: OptionIssue[] = [];
  const out: WhoClause[] = [];
  let pairs: Array<[string, unknown, OptionPath]> = [];
  collect(issues, () => (pairs = pairsOf(value, path)));
  for (const [key, spec, at] of pairs) {
    collect(issues, () => {
      if (key === 'access') {
        out.push({ kind: 'access', rule: typeof spec === 'string' ? spec : parseAccessRule(spec, at), path: at });
      } else if (key === 'acl') {
        for (const c of parseConditions(spec, at)) out.push({ kind: 'condition', condition: c, text: 'acl' in c ? `acl: ${c.acl}` : c.rule.text });
      } else if (key === 'oauth' && allowOauth) {
        out.push(parseOauth(spec, at));
      } else if (isAclRuleType(key)) {
        for (const rule of parseAclRules(key, spec, at)) out.push({ kind: 'condition', condition: { rule }, text: rule.text });
      } else {
        const known = ['acl', 'access', ...(allowOauth ? ['oauth'] : []), 'ip', 'user', 'server'];
        throw OptionIssues.one(at, `unknown clause '${key}'${didYouMean(key, known)}`, true);
      }
    });
  }
  if (issues.length) throw new OptionIssues(issues);
  return out;
}

function parseOauth(value: unknown, path: OptionPath): WhoClause {
  if (!isPlainObject(value)) throw OptionIssues.one(path, 'expected {scope: …} with optional acl/access rules');
  const { scope, ...rest } = value;
  const scopes = (Array.isArray(scope) ? scope : scope === undefined ? [] : [scope]).map(String);
  if (scopes.length === 0 || scopes.some((s) => !s)) throw OptionIssues.one([...path, 'scope'], 'is required: expected one or more scopes, like service:admin');
  const rules = Object.keys(rest).length ? (parseWho(rest, path, false) as WhoRule[]) : [];
  return { kind: 'oauth', scopes, rules };
}

function parseWhat(value: unknown, path: OptionPath): WhatSpec {
  const items = Array.isArray(value) ? value : [value];
  let add: PatternSet | Pattern[] = [];
  let del: PatternSet | Pattern[] = [];
  const issues: OptionIssue[] = [];
  items.forEach((item, i) => {
    const at = Array.isArray(value) ? [...path, i] : path;
    if (typeof item !== 'string' || item === '') {
      issues.push({ path: at, message: 'expected a command name, "*", "[tag:name]" or one of those prefixed with "!"' });
      return;
    }
    const negated = item.startsWith('!');
    const body = negated ? item.slice(1) : item;
    if (body.startsWith('!')) {
      issues.push({ path: at, message: `double negation in '${item}'` });
      return;
    }
    let pattern: Pattern | 'all';
    if (body === '*') pattern = 'all';
    else if (body.startsWith('[tag:')) {
      const tag = /^\[tag:([a-z0-9_-]+)\]$/.exec(body)?.[1];
      if (!tag) {
        issues.push({ path: at, message: `invalid tag pattern '${item}': expected "[tag:name]"` });
        return;
      }
      pattern = { tag };
    } else if (/^[a-z0-9_-]+$/.test(body)) pattern = { name: body };
    else {
      issues.push({ path: at, message: `invalid command name '${item}'` });
      return;
    }
    // The fold of ejabberd's parse_what: "*" and "!*" override lists; an explicit "!*" empties the set.
    if (!negated) {
      if (pattern === 'all') add = add === 'none' ? 'none' : 'all';
      else if (Array.isArray(add)) add = [...add, pattern];
    } else if (pattern === 'all') {
      add = 'none';
      del = 'all';
    } else if (Array.isArray(del)) del = [...del, pattern];
  });
  if (issues.length) throw new OptionIssues(issues);
  if (Array.isArray(add) && add.length === 0) return { add: 'none', del: 'all' };
  if (Array.isArray(del) && del.length === 0) return { add, del: 'none' };
  return { add, del };
}

function patternsMatch(set: PatternSet, name: string, tags: readonly string[]): boolean {
  if (set === 'all') return true;
  if (set === 'none') return false;
  return set.some((p) => ('name' in p ? p.name === name : tags.includes(p.tag)));
}

/** Whether the group's `what` covers the command. */
export function whatIncludes(what: WhatSpec, name: string, tags: readonly string[]): boolean {
  return patternsMatch(what.add, name, tags) && !patternsMatch(what.del, name, tags);
}

/** ejabberd's default when api_permissions is not configured: the admin ACL may run all but start/stop. */
export function defaultApiPermissions(): ApiPermissionGroup[] {
  const adminAcl: WhoRule = { kind: 'condition', condition: { acl: 'admin', path: ['api_permissions'] }, text: 'acl: admin' };
  return [
    {
      name: 'admin access',
      from: { frontends: [], tags: [] },
      who: [adminAcl, { kind: 'oauth', scopes: ['service:admin'], rules: [adminAcl] }],
      what: { add: 'all', del: [{ name: 'start' }, { name: 'stop' }] },
    },
  ];
}

/** Adds the implicit "console commands" group unless the operator defined one with that name. */
export function withConsoleGroup(groups: readonly ApiPermissionGroup[]): ApiPermissionGroup[] {
  if (groups.some((g) => g.name === CONSOLE_GROUP)) return [...groups];
  const console: ApiPermissionGroup = {
    name: CONSOLE_GROUP,
    from: { frontends: ['service_ctl'], tags: [] },
    who: [{ kind: 'condition', condition: { acl: 'all', path: [] }, text: 'acl: all' }],
    what: { add: 'all', del: 'none' },
  };
  return [console, ...groups];
}
