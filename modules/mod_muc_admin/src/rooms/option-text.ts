/**
 * Room options as the commands write them: text values (`true`, `20`, `moderator,participant`) turned
 * into RoomOptions values and back. The table of kinds is checked by the compiler against mod_muc's
 * RoomOptions, so an option mod_muc adds or drops is a build error here rather than a silent gap; it lets
 * create_room_with_opts check every option before the room exists, and names unknown options with a
 * did-you-mean.
 */
import { badArgument } from '@service/plugin-api';
import type { Role, RoomOptionName, RoomOptions } from '@service/mod_muc/api';

type OptionKind = 'boolean' | 'integer' | 'string' | 'roles';

/** What kind of value each option holds (`roles`: a list of role names). */
const KINDS: { readonly [K in RoomOptionName]: RoomOptions[K] extends boolean ? 'boolean' : RoomOptions[K] extends number ? 'integer' : RoomOptions[K] extends string ? 'string' : 'roles' } = {
  title: 'string',
  description: 'string',
  persistent: 'boolean',
  public: 'boolean',
  public_list: 'boolean',
  password_protected: 'boolean',
  password: 'string',
  members_only: 'boolean',
  moderated: 'boolean',
  members_by_default: 'boolean',
  allow_change_subj: 'boolean',
  allow_private_messages: 'boolean',
  allow_query_users: 'boolean',
  allow_user_invites: 'boolean',
  allow_visitor_nickchange: 'boolean',
  allow_visitor_status: 'boolean',
  allow_voice_requests: 'boolean',
  voice_request_min_interval: 'integer',
  max_users: 'integer',
  logging: 'boolean',
  mam: 'boolean',
  allow_subscription: 'boolean',
  lang: 'string',
  presence_broadcast: 'roles',
  anonymous: 'boolean',
  captcha_protected: 'boolean',
};

export const OPTION_NAMES = Object.keys(KINDS) as RoomOptionName[];
const ROLES: readonly Exclude<Role, 'none'>[] = ['moderator', 'participant', 'visitor'];

/** The option named `name`, or a 400 naming the argument, with the closest known name. */
export function optionName(name: string, argument: string): RoomOptionName {
  if (Object.hasOwn(KINDS, name)) return name as RoomOptionName;
  const close = closest(name, OPTION_NAMES);
  throw badArgument(argument, `unknown room option '${name}'${close ? ` (did you mean '${close}'?)` : ''}; the options are ${OPTION_NAMES.join(', ')}`);
}

/** An option's value from its text; a 400 naming the argument and the option when it is not one. */
export function optionValue<K extends RoomOptionName>(name: K, text: string, argument: string): RoomOptions[K] {
  const kind: OptionKind = KINDS[name];
  const bad = (expected: string) => badArgument(argument, `option ${name} takes ${expected}, got '${text}'`);
  switch (kind) {
    case 'boolean':
      if (text === 'true' || text === '1') return true as RoomOptions[K];
      if (text === 'false' || text === '0') return false as RoomOptions[K];
      throw bad('true or false');
    case 'integer':
      if (!/^\d{1,9}$/.test(text)) throw bad('a non-negative integer');
      return Number(text) as RoomOptions[K];
    case 'string':
      return text as RoomOptions[K];
    case 'roles': {
      const names = text
        .replace(/^\[|\]$/g, '')
        .split(/[,;\s]+/)
        .filter((role) => role !== '');
      const unknown = names.filter((role) => !(ROLES as readonly string[]).includes(role));
      if (unknown.length) throw bad(`a list of roles among ${ROLES.join(', ')} separated by commas`);
      return [...new Set(names)] as RoomOptions[K];
    }
  }
}

/** An option's value as text (get_room_options): booleans as true/false, role lists separated by commas. */
export function optionText(value: RoomOptions[RoomOptionName]): string {
  if (Array.isArray(value)) return value.join(',');
  return String(value);
}

function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const candidate of candidates) {
    const distance = levenshtein(word, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function levenshtein(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}
