/**
 * The compiled acl, access_rules and api_permissions of one configuration. Built once per (re)load, so a
 * request only walks prepared structures; cross-references (an access rule naming an ACL that does not
 * exist) are reported at load with the option path and a did-you-mean.
 */
import { OptionIssues, didYouMean, type OptionIssue } from '../config/option-spec.js';
import type { Caller } from '@service/plugin-api';
import type { AclDefinitions, AclEnvironment, AclSubject } from './acl.js';
import { aclReferences, conditionMatches, matchAccessRule, type AccessAction, type AccessRule, type AccessRuleDefinitions } from './access-rules.js';
import { matchShaperRule, type ShaperDefinition, type ShaperDefinitions, type ShaperRuleDefinitions, type ShaperRuleValue } from './shaper-rules.js';
import { defaultApiPermissions, whatIncludes, withConsoleGroup, type ApiPermissionGroup, type WhoClause, type WhoRule } from './api-permissions.js';

export interface AccessSettings {
  readonly hosts: readonly string[];
  readonly acl: AclDefinitions;
  readonly accessRules: AccessRuleDefinitions;
  /** Undefined when the configuration has no api_permissions: ejabberd's default applies. */
  readonly apiPermissions?: readonly ApiPermissionGroup[];
  /** ejabberd's `shaper` section: named shapers. */
  readonly shapers?: ShaperDefinitions;
  /** ejabberd's `shaper_rules` section. */
  readonly shaperRules?: ShaperRuleDefinitions;
}

/** The rule ejabberd reads for the number of sessions an account may have at once. */
export const MAX_USER_SESSIONS_RULE = 'max_user_sessions';

export type SharedGroupLookup = (user: string, server: string, group: string, groupHost: string) => boolean;

export interface Decision {
  readonly allowed: boolean;
  /** The group that allowed the call. */
  readonly group?: string;
}

export class AccessControl {
  readonly #hosts: ReadonlySet<string>;
  readonly #acl: AclDefinitions;
  readonly #rules: AccessRuleDefinitions;
  readonly #groups: readonly ApiPermissionGroup[];
  readonly #shapers: ShaperDefinitions;
  readonly #shaperRules: ShaperRuleDefinitions;
  readonly #env: AclEnvironment;
  #sharedGroups: SharedGroupLookup = () => false;
  /**
   * Decisions already taken, per command declaration and caller: the configuration is fixed for the life of
   * this object, so the same caller asking for the same command gets the same answer — except through
   * shared_group rules, whose membership changes; a decision that consulted one is not kept.
   */
  readonly #decisions = new Map<object, Map<string, Decision>>();
  #decisionCount = 0;
  #consultedDynamic = false;

  constructor(settings: AccessSettings) {
    this.#hosts = new Set(settings.hosts.map((h) => h.toLowerCase()));
    this.#acl = settings.acl;
    this.#rules = settings.accessRules;
    this.#groups = withConsoleGroup(settings.apiPermissions ?? defaultApiPermissions());
    this.#shapers = settings.shapers ?? new Map();
    this.#shaperRules = settings.shaperRules ?? new Map();
    this.#env = {
      isLocalHost: (host) => this.#hosts.has(host),
      isInSharedGroup: (user, server, group, groupHost) => {
        this.#consultedDynamic = true;
        return this.#sharedGroups(user, server, group, groupHost);
      },
      matchNamed: (name, subject) => this.matchAcl(name, subject),
    };
    this.#checkReferences(settings.apiPermissions !== undefined);
  }

  /** mod_shared_roster plugs in here so that `shared_group` rules work. */
  setSharedGroupLookup(lookup: SharedGroupLookup | undefined): void {
    this.#sharedGroups = lookup ?? (() => false);
  }

  get groups(): readonly ApiPermissionGroup[] {
    return this.#groups;
  }

  matchAcl(name: string, subject: AclSubject): boolean {
    if (name === 'all') return true;
    if (name === 'none') return false;
    return this.#acl.get(name)?.some((rule) => rule.matches(subject, this.#env)) ?? false;
  }

  /** The named access rule's answer for a subject; an undefined rule denies, as in ejabberd. */
  matchRule(rule: string | AccessRule, subject: AclSubject): AccessAction {
    if (rule === 'all') return 'allow';
    if (rule === 'none') return 'deny';
    const compiled = typeof rule === 'string' ? this.#rules.get(rule) : rule;
    return compiled ? matchAccessRule(compiled, subject, this.#env) : 'deny';
  }

  hasRule(name: string): boolean {
    return name === 'all' || name === 'none' || this.#rules.has(name);
  }

  /** A shaper_rules rule's value for a subject; undefined when the rule is not defined or no entry matches. */
  shaperRuleValue(rule: string, subject: AclSubject): ShaperRuleValue | undefined {
    const compiled = this.#shaperRules.get(rule);
    return compiled ? matchShaperRule(compiled, subject, this.#env) : undefined;
  }

  /**
   * The shaper a listener's `shaper` option gives a subject: the option names a shaper rule (evaluated for
   * the subject) or a shaper; `none`, an unmatched rule or a rule answering `none` give no shaper. A number
   * in a rule is a rate in bytes per second.
   */
  shaperFor(option: string, subject: AclSubject): ShaperDefinition | undefined {
    if (option === 'none') return undefined;
    const value = this.#shaperRules.has(option) ? this.shaperRuleValue(option, subject) : option;
    if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? { rate: value, burst: value } : undefined;
    return value === undefined || value === 'none' ? undefined : this.#shapers.get(value);
  }

  /** Whether a listener's `shaper` option names something that exists (`none`, a shaper rule or a shaper). */
  hasShaperOrRule(name: string): boolean {
    return name === 'none' || this.#shaperRules.has(name) || this.#shapers.has(name);
  }

  /** The names a listener's `shaper` option may use, for did-you-means. */
  shaperNames(): string[] {
    return ['none', ...this.#shaperRules.keys(), ...this.#shapers.keys()];
  }

  /** ejabberd's max_user_sessions rule for an account: how many sessions it may have at once (default infinity). */
  maxUserSessions(subject: AclSubject): number {
    const value = this.shaperRuleValue(MAX_USER_SESSIONS_RULE, subject);
    return typeof value === 'number' ? value : Infinity;
  }

  /** Decides whether `caller` may run a command with this name and tags. */
  check(command: { readonly name: string; readonly tags: readonly string[] }, caller: Caller): Decision {
    let forCommand = this.#decisions.get(command);
    const key = callerKey(caller);
    const known = forCommand?.get(key);
    if (known) return known;
    this.#consultedDynamic = false;
    const decision = this.#decide(command, caller);
    if (!this.#consultedDynamic) {
      if (this.#decisionCount >= MAX_DECISIONS) {
        // Many callers (anonymous calls from many addresses): start over rather than track recency.
        this.#decisions.clear();
        this.#decisionCount = 0;
        forCommand = undefined;
      }
      if (!forCommand) this.#decisions.set(command, (forCommand = new Map()));
      forCommand.set(key, decision);
      this.#decisionCount++;
    }
    return decision;
  }

  #decide(command: { readonly name: string; readonly tags: readonly string[] }, caller: Caller): Decision {
    const subject = subjectOf(caller);
    for (const group of this.#groups) {
      if (this.#groupMatches(group, command, caller, subject)) return { allowed: true, group: group.name };
    }
    return { allowed: false };
  }

  /** For a denied call: each group consulted and why it did not match, for the log. */
  explain(command: { readonly name: string; readonly tags: readonly string[] }, caller: Caller): string[] {
    return this.#groups.map((group) => {
      if (!whatIncludes(group.what, command.name, command.tags)) return `'${group.name}': what does not include ${command.name}`;
      if (!this.#fromMatches(group, caller)) return `'${group.name}': from does not include ${caller.frontend}${caller.tag ? ` (tag ${caller.tag})` : ''}`;
      const clauses = group.who.filter((c) => (caller.oauth ? c.kind === 'oauth' : c.kind !== 'oauth'));
      if (clauses.length === 0) return `'${group.name}': who has no ${caller.oauth ? 'oauth' : 'non-oauth'} clause`;
      return `'${group.name}': who did not match ${describeCaller(caller)} (tried ${clauses.map(describeClause).join(', ')})`;
    });
  }

  #fromMatches(group: ApiPermissionGroup, caller: Caller): boolean {
    const { frontends, tags } = group.from;
    return (frontends.length === 0 || frontends.includes(caller.frontend)) && (tags.length === 0 || (caller.tag !== undefined && tags.includes(caller.tag)));
  }

  #groupMatches(group: ApiPermissionGroup, command: { name: string; tags: readonly string[] }, caller: Caller, subject: AclSubject): boolean {
    if (!whatIncludes(group.what, command.name, command.tags) || !this.#fromMatches(group, caller)) return false;
    const oauth = caller.oauth;
    return group.who.some((clause) => {
      if (clause.kind === 'oauth') {
        if (!oauth || !clause.scopes.some((s) => oauth.scopes.includes(s))) return false;
        // A clause without account rules admits every holder of the scope (ejabberd would admit nobody).
        return clause.rules.length === 0 || clause.rules.some((r) => this.#whoRuleMatches(r, subject));
      }
      return !oauth && this.#whoRuleMatches(clause, subject);
    });
  }

  #whoRuleMatches(rule: WhoRule, subject: AclSubject): boolean {
    return rule.kind === 'access' ? this.matchRule(rule.rule, subject) === 'allow' : conditionMatches(rule.condition, subject, this.#env);
  }

  #checkReferences(checkGroups: boolean): void {
    const issues: OptionIssue[] = [];
    const aclNames = [...this.#acl.keys(), 'all', 'none'];
    const ruleNames = [...this.#rules.keys(), 'all', 'none'];
    const checkAcl = (ref: { acl: string; path: readonly (string | number)[] }) => {
      if (!aclNames.includes(ref.acl)) issues.push({ path: ref.path, message: `ACL '${ref.acl}' is not defined in acl${didYouMean(ref.acl, aclNames)}` });
    };
    for (const rule of this.#rules.values()) for (const ref of aclReferences(rule)) checkAcl(ref);
    const shaperNames = ['none', ...this.#shapers.keys()];
    for (const [name, rule] of this.#shaperRules) {
      for (const entry of rule.entries) {
        for (const c of entry.conditions) if ('acl' in c) checkAcl(c);
        if (typeof entry.value !== 'string') continue;
        if (name === MAX_USER_SESSIONS_RULE) {
          issues.push({ path: entry.path, message: `max_user_sessions takes a number of sessions or infinity, got '${entry.value}'`, atKey: entry.atKey });
        } else if (!shaperNames.includes(entry.value)) {
          issues.push({
            path: entry.path,
            message: `unknown shaper '${entry.value}'${didYouMean(entry.value, shaperNames)}; defined in shaper: ${[...this.#shapers.keys()].join(', ') || 'none'}`,
            atKey: entry.atKey,
          });
        }
      }
    }
    if (checkGroups) {
      const visit = (clause: WhoClause) => {
        if (clause.kind === 'oauth') clause.rules.forEach(visit);
        else if (clause.kind === 'access') {
          if (typeof clause.rule === 'string') {
            if (!ruleNames.includes(clause.rule)) {
              issues.push({ path: clause.path, message: `access rule '${clause.rule}' is not defined in access_rules${didYouMean(clause.rule, ruleNames)}` });
            }
          } else for (const ref of aclReferences(clause.rule)) checkAcl(ref);
        } else if ('acl' in clause.condition) checkAcl(clause.condition);
      };
      for (const group of this.#groups) group.who.forEach(visit);
    }
    if (issues.length) throw new OptionIssues(issues);
  }
}

/** Decisions kept at most, over all commands and callers. */
const MAX_DECISIONS = 10_000;

/** Everything about a caller that api_permissions can look at. */
function callerKey(caller: Caller): string {
  const account = caller.account ? `${caller.account.user}@${caller.account.host}` : '';
  const scopes = caller.oauth ? caller.oauth.scopes.join(' ') : '\u0000';
  return `${caller.frontend}\n${caller.tag ?? ''}\n${account}\n${caller.ip ?? ''}\n${scopes}`;
}

export function subjectOf(caller: Caller): AclSubject {
  return { user: caller.account?.user, server: caller.account?.host, ip: caller.ip };
}

function describeCaller(caller: Caller): string {
  const who = caller.account ? `${caller.account.user}@${caller.account.host}` : 'an anonymous caller';
  const scopes = caller.oauth ? ` with scopes ${caller.oauth.scopes.join(' ') || '(none)'}` : '';
  return `${who}${caller.ip ? ` from ${caller.ip}` : ''}${scopes}`;
}

function describeClause(clause: WhoClause): string {
  if (clause.kind === 'oauth') return `oauth scope ${clause.scopes.join('|')}`;
  if (clause.kind === 'access') return `access: ${typeof clause.rule === 'string' ? clause.rule : '(inline rule)'}`;
  return clause.text;
}
