/**
 * ACLs, with ejabberd's YAML forms and matching semantics:
 *
 *   acl:
 *     admin:
 *       user: admin@localhost          # or a list; `user: admin` means admin on any served vhost
 *     loopback:
 *       ip: [127.0.0.0/8, ::1/128]
 *     staff:
 *       - user_regexp: "^staff-"
 *       - server: example.org
 *
 * An ACL matches a subject when any of its rules does. Rule types: user, server, resource, user_regexp,
 * server_regexp, resource_regexp, node_regexp, user_glob, server_glob, resource_glob, node_glob,
 * shared_group, ip. Regexps search (unanchored, like Erlang's re:run); globs match the whole value.
 */
import { OptionIssues, didYouMean, isPlainObject, type OptionIssue, type OptionPath } from '../config/option-spec.js';
import { parseIpNetwork } from './ip.js';

/** Who is being checked: an account and/or an address. Parts are already normalized (lowercase). */
export interface AclSubject {
  readonly user?: string;
  readonly server?: string;
  readonly resource?: string;
  readonly ip?: string;
}

export interface AclEnvironment {
  /** The vhosts served, for rules like `user: admin` that mean "on any local vhost". */
  isLocalHost(host: string): boolean;
  /** Shared roster groups; false until a module provides them. */
  isInSharedGroup(user: string, server: string, group: string, groupHost: string): boolean;
  /** For a reference to another ACL by name (`acl: admin` inside an access rule). */
  matchNamed(name: string, subject: AclSubject): boolean;
}

export interface AclRule {
  /** How the operator wrote it, for explanations. */
  readonly text: string;
  matches(subject: AclSubject, env: AclEnvironment): boolean;
}

export const ACL_RULE_TYPES = [
  'user',
  'server',
  'resource',
  'user_regexp',
  'server_regexp',
  'resource_regexp',
  'node_regexp',
  'user_glob',
  'server_glob',
  'resource_glob',
  'node_glob',
  'shared_group',
  'ip',
] as const;
export type AclRuleType = (typeof ACL_RULE_TYPES)[number];

export function isAclRuleType(key: string): key is AclRuleType {
  return (ACL_RULE_TYPES as readonly string[]).includes(key);
}

/** Named ACLs as configured; `all` and `none` are built in and may not be redefined. */
export type AclDefinitions = ReadonlyMap<string, readonly AclRule[]>;

export function parseAclSection(raw: unknown, path: OptionPath): AclDefinitions {
  const out = new Map<string, AclRule[]>();
  if (raw === undefined || raw === null) return out;
  if (!isPlainObject(raw)) throw OptionIssues.one(path, 'expected a map of ACL names to rules');
  const issues: OptionIssue[] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (name === 'all' || name === 'none') {
      issues.push({ path: [...path, name], message: `'${name}' is built in and cannot be redefined`, atKey: true });
      continue;
    }
    const rules: AclRule[] = [];
    const entries = Array.isArray(value) ? value : [value];
    if (entries.length === 0) issues.push({ path: [...path, name], message: 'must not be empty: expected rules like user: admin@localhost' });
    entries.forEach((entry, i) => {
      const entryPath = Array.isArray(value) ? [...path, name, i] : [...path, name];
      if (!isPlainObject(entry)) {
        issues.push({ path: entryPath, message: 'expected rules like user: admin@localhost or ip: 127.0.0.0/8' });
        return;
      }
      for (const [type, spec] of Object.entries(entry)) {
        collect(issues, () => rules.push(...parseAclRules(type, spec, [...entryPath, type])));
      }
    });
    out.set(name, rules);
  }
  if (issues.length) throw new OptionIssues(issues);
  return out;
}

/** Runs `fn`, moving its OptionIssues into `issues` so that parsing goes on and reports everything. */
export function collect(issues: OptionIssue[], fn: () => void): void {
  try {
    fn();
  } catch (err) {
    if (err instanceof OptionIssues) issues.push(...err.issues);
    else throw err;
  }
}

/** Parses one `type: value-or-list` pair into rules (a list gives one rule per element). */
export function parseAclRules(type: string, spec: unknown, path: OptionPath): AclRule[] {
  if (!isAclRuleType(type)) {
    throw OptionIssues.one(path, `unknown ACL rule type${didYouMean(type, ACL_RULE_TYPES)}; expected one of ${ACL_RULE_TYPES.join(', ')}`, true);
  }
  const values = Array.isArray(spec) ? spec : [spec];
  if (values.length === 0) throw OptionIssues.one(path, 'must not be empty');
  const issues: OptionIssue[] = [];
  const rules: AclRule[] = [];
  values.forEach((value, i) => {
    const at = Array.isArray(spec) ? [...path, i] : path;
    try {
      rules.push(...parseOne(type, value));
    } catch (err) {
      issues.push({ path: at, message: (err as Error).message });
    }
  });
  if (issues.length) throw new OptionIssues(issues);
  return rules;
}

function text(value: unknown, what: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  throw new Error(`expected ${what}, got ${Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'a map' : String(value)}`);
}

function regexp(source: string): RegExp {
  try {
    return new RegExp(source, 'u');
  } catch (err) {
    throw new Error(`invalid regular expression ${JSON.stringify(source)}: ${(err as Error).message}`);
  }
}

/** Shell glob to an anchored regexp: `*`, `?` and `[...]` (with `!` negation), as ejabberd's sh_to_awk. */
export function globToRegExp(glob: string): RegExp {
  let out = '^';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') out += '.*';
    else if (c === '?') out += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end === -1) {
        out += '\\[';
        continue;
      }
      let body = glob.slice(i + 1, end);
      if (body.startsWith('!')) body = `^${body.slice(1)}`;
      out += `[${body.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else out += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return regexp(`${out}$`);
}

/** `name`, `name@server` or a map `{name: server}` (ejabberd accepts all three). */
function userParts(value: unknown, what: string): Array<{ user: string; server?: string }> {
  if (isPlainObject(value)) return Object.entries(value).map(([user, server]) => ({ user, server: text(server, 'a server name').toLowerCase() }));
  const spec = text(value, what);
  const at = spec.lastIndexOf('@');
  if (at === -1) return [{ user: spec }];
  const server = spec.slice(at + 1).toLowerCase();
  if (!server) throw new Error(`'${spec}' has an empty server part`);
  return [{ user: spec.slice(0, at), server }];
}

function parseOne(type: AclRuleType, value: unknown): AclRule[] {
  switch (type) {
    case 'user':
      return userParts(value, 'a user like admin@example.org').map(({ user, server }) => {
        const u = user.toLowerCase();
        return server
          ? rule(`user: ${u}@${server}`, (s) => s.user === u && s.server === server)
          : rule(`user: ${u}`, (s, env) => s.user === u && s.server !== undefined && env.isLocalHost(s.server));
      });
    case 'user_regexp':
    case 'user_glob':
      return userParts(value, 'a pattern').map(({ user, server }) => {
        const re = type === 'user_regexp' ? regexp(user) : globToRegExp(user);
        return server
          ? rule(`${type}: ${user}@${server}`, (s) => s.user !== undefined && s.server === server && re.test(s.user))
          : rule(`${type}: ${user}`, (s, env) => s.user !== undefined && s.server !== undefined && env.isLocalHost(s.server) && re.test(s.user));
      });
    case 'server': {
      const server = text(value, 'a server name').toLowerCase();
      return [rule(`server: ${server}`, (s) => s.server === server)];
    }
    case 'resource': {
      const resource = text(value, 'a resource');
      return [rule(`resource: ${resource}`, (s) => s.resource === resource)];
    }
    case 'server_regexp':
    case 'server_glob':
    case 'resource_regexp':
    case 'resource_glob': {
      const source = text(value, 'a pattern');
      const re = type.endsWith('_regexp') ? regexp(source) : globToRegExp(source);
      const part = type.startsWith('server') ? 'server' : 'resource';
      return [rule(`${type}: ${source}`, (s) => s[part] !== undefined && re.test(s[part]))];
    }
    case 'node_regexp':
    case 'node_glob': {
      if (!isPlainObject(value)) throw new Error('expected a map of user pattern to server pattern, like "^admin": "example\\\\.org$"');
      return Object.entries(value).map(([userPattern, serverPattern]) => {
        const make = type === 'node_regexp' ? regexp : globToRegExp;
        const ure = make(userPattern);
        const sre = make(text(serverPattern, 'a server pattern'));
        return rule(`${type}: ${userPattern}@${String(serverPattern)}`, (s) => s.user !== undefined && s.server !== undefined && ure.test(s.user) && sre.test(s.server));
      });
    }
    case 'shared_group':
      return userParts(value, 'a group like friends@example.org').map(({ user: group, server: groupHost }) =>
        rule(`shared_group: ${group}${groupHost ? `@${groupHost}` : ''}`, (s, env) =>
          s.user !== undefined && s.server !== undefined && env.isInSharedGroup(s.user, s.server, group, groupHost ?? s.server),
        ),
      );
    case 'ip': {
      const network = parseIpNetwork(text(value, 'an IP address or network'));
      return [rule(`ip: ${network.text}`, (s) => s.ip !== undefined && network.matches(s.ip))];
    }
  }
}

function rule(description: string, test: (s: AclSubject, env: AclEnvironment) => boolean): AclRule {
  return { text: description, matches: test };
}
