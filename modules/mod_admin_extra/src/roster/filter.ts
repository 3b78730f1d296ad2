/**
 * The filter grammar of process_rosteritems (the spec's table "process_rosteritems filter grammar"):
 *
 *   subs       `any`, or SUB[:SUB]*   with SUB = none, from, to, both
 *   asks       `any`, or ASK[:ASK]*   with ASK = none, out, in
 *   users      `any`, or JID[:JID]*   matched against the roster's owner
 *   contacts   `any`, or JID[:JID]*   matched against the contact
 *
 * A JID pattern is `user@host` (or `host` alone, which matches only contacts without a user part, such as
 * gateways). Each part is a glob matched against the whole normalized part: `*` any sequence, `?` one
 * character, `[abc]`, `[a-z]` and `[!abc]` a character class, and a leading `!` negates the part. `any` in
 * a JID list stands for every JID, as ejabberd's `*` and `*@*`.
 *
 * The spec gives each backend its own row. On the embedded store (its Mnesia row) `%` and `_` are
 * ordinary characters, as in ejabberd's Mnesia backend: `_` is common in user names, and `john_doe` must
 * not also name johnxdoe when the action is delete. On SQL the row's wildcards `%` (as `*`) and `_` (as
 * `?`) work, `[_]` and `[%]` matching the characters themselves; the Mnesia row's lists and globs are
 * accepted there too, so that a script written for either backend keeps working.
 */
import { badArgument, type DbKind } from '@service/plugin-api';
import type { Subscription } from '@service/mod_roster/api';

export const SUBSCRIPTIONS: readonly Subscription[] = ['none', 'from', 'to', 'both'];
export const ASKS = ['none', 'out', 'in'] as const;
export type Ask = (typeof ASKS)[number];

/** What a roster row must be like to match. */
export interface RosterFilter {
  readonly subscriptions: ReadonlySet<Subscription>;
  readonly asks: ReadonlySet<Ask>;
  readonly users: JidMatcher;
  readonly contacts: JidMatcher;
}

export type JidMatcher = (jid: string) => boolean;

/** `store` is where the roster rows live: it decides whether `%` and `_` are wildcards (see above). */
export function parseFilter(args: { subs: string; asks: string; users: string; contacts: string }, store: DbKind): RosterFilter {
  const sqlWildcards = store === 'sql';
  return {
    subscriptions: parseWords('subs', args.subs, SUBSCRIPTIONS),
    asks: parseWords('asks', args.asks, ASKS),
    users: parseJids('users', args.users, sqlWildcards),
    contacts: parseJids('contacts', args.contacts, sqlWildcards),
  };
}

/** The asks of a row: what it waits for. Both requests open (possible with subscription none) is both. */
export function asksOf(row: { pendingOut: boolean; pendingIn: boolean }): Ask[] {
  const asks: Ask[] = [];
  if (row.pendingOut) asks.push('out');
  if (row.pendingIn) asks.push('in');
  return asks.length ? asks : ['none'];
}

function alternatives(argument: string, text: string): string[] {
  const parts = text.split(':').map((p) => p.trim());
  if (parts.some((p) => p === '')) {
    throw badArgument(argument, `${argument} '${text}' has an empty alternative: give 'any' or values separated by ':'`);
  }
  return parts;
}

function parseWords<W extends string>(argument: string, text: string, allowed: readonly W[]): ReadonlySet<W> {
  const words = alternatives(argument, text.toLowerCase());
  if (words.includes('any')) return new Set(allowed);
  for (const word of words) {
    if (!allowed.includes(word as W)) throw badArgument(argument, `${argument}: '${word}' is not one of any, ${allowed.join(', ')}`);
  }
  return new Set(words as W[]);
}

function parseJids(argument: string, text: string, sqlWildcards: boolean): JidMatcher {
  const patterns = alternatives(argument, text);
  if (patterns.some((p) => p.toLowerCase() === 'any')) return () => true;
  const matchers = patterns.map((pattern) => jidPattern(argument, pattern, sqlWildcards));
  return (jid) => matchers.some((m) => m(jid));
}

/** One `user@host` or `host` pattern. */
function jidPattern(argument: string, pattern: string, sqlWildcards: boolean): JidMatcher {
  if (pattern.includes('/')) throw badArgument(argument, `${argument}: '${pattern}' has a resource; roster items are bare JIDs`);
  const at = pattern.indexOf('@');
  if (at < 0) {
    const host = glob(argument, pattern, sqlWildcards);
    return (jid) => !jid.includes('@') && host(jid);
  }
  const userPart = pattern.slice(0, at);
  const hostPart = pattern.slice(at + 1);
  if (userPart === '' || hostPart === '' || hostPart.includes('@')) {
    throw badArgument(argument, `${argument}: '${pattern}' is not a JID pattern (user@host or host)`);
  }
  const user = glob(argument, userPart, sqlWildcards);
  const host = glob(argument, hostPart, sqlWildcards);
  return (jid) => {
    const i = jid.indexOf('@');
    return i >= 0 && user(jid.slice(0, i)) && host(jid.slice(i + 1));
  };
}

/**
 * A glob over one JID part. Stored JIDs are normalized (lower case), so the pattern is lowered too:
 * `Alice*` finds alice1.
 */
function glob(argument: string, part: string, sqlWildcards: boolean): (text: string) => boolean {
  const negated = part.startsWith('!');
  const source = toRegExp(argument, (negated ? part.slice(1) : part).toLowerCase(), sqlWildcards);
  const re = new RegExp(`^(?:${source})$`, 'su');
  return negated ? (text) => !re.test(text) : (text) => re.test(text);
}

const REGEXP_SYNTAX = /[\\^$.*+?()[\]{}|/]/;

function escapeChar(c: string): string {
  return REGEXP_SYNTAX.test(c) ? `\\${c}` : c;
}

function escapeInClass(c: string): string {
  return /[\\\]^[-]/.test(c) ? `\\${c}` : c;
}

function toRegExp(argument: string, pattern: string, sqlWildcards: boolean): string {
  const chars = [...pattern];
  let out = '';
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '*' || (sqlWildcards && c === '%')) out += '.*';
    else if (c === '?' || (sqlWildcards && c === '_')) out += '.';
    else if (c === '[') {
      const { source, end } = charClass(argument, pattern, chars, i);
      out += source;
      i = end;
    } else out += escapeChar(c);
  }
  return out;
}

/** `[...]` starting at `start`: `[!` negates, a `]` first is literal, `a-z` is a range. */
function charClass(argument: string, pattern: string, chars: string[], start: number): { source: string; end: number } {
  let i = start + 1;
  const negated = chars[i] === '!';
  if (negated) i++;
  const items: string[] = [];
  let first = true;
  for (; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === ']' && !first) {
      if (!items.length) throw badArgument(argument, `${argument}: '${pattern}' has an empty character class`);
      return { source: `[${negated ? '^' : ''}${items.join('')}]`, end: i };
    }
    first = false;
    const to = chars[i + 2];
    if (chars[i + 1] === '-' && to !== undefined && to !== ']') {
      if (c.codePointAt(0)! > to.codePointAt(0)!) throw badArgument(argument, `${argument}: '${pattern}' has the range ${c}-${to}, which is backwards`);
      items.push(`${escapeInClass(c)}-${escapeInClass(to)}`);
      i += 2;
    } else items.push(escapeInClass(c));
  }
  throw badArgument(argument, `${argument}: '${pattern}' has a '[' without its ']'`);
}
