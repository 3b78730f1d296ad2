/**
 * Room options under ejabberd's names: their kinds, the defaults a new room gets, and the two ways values
 * arrive from outside — typed values (default_room_options in the configuration, RoomCreation.options)
 * and text (change_room_option's `value`). A bad name or value is a RoomOptionError naming it; callers turn
 * it into a configuration error or a MucError('bad_argument').
 */
import { closest } from '@service/plugin-api';
import type { Role, RoomOptionName, RoomOptions } from './types.js';

type OptionKind = 'boolean' | 'integer' | 'string' | 'roles';

const KINDS: { readonly [K in RoomOptionName]: OptionKind } = {
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

/** ejabberd's defaults for a new room. */
export const BUILTIN_ROOM_DEFAULTS: Readonly<RoomOptions> = {
  title: '',
  description: '',
  persistent: false,
  public: true,
  public_list: true,
  password_protected: false,
  password: '',
  members_only: false,
  moderated: true,
  members_by_default: true,
  allow_change_subj: true,
  allow_private_messages: true,
  allow_query_users: true,
  allow_user_invites: false,
  allow_visitor_nickchange: true,
  allow_visitor_status: true,
  allow_voice_requests: true,
  voice_request_min_interval: 1800,
  max_users: 200,
  logging: false,
  mam: false,
  allow_subscription: false,
  lang: '',
  presence_broadcast: ['moderator', 'participant', 'visitor'],
  anonymous: true,
  captcha_protected: false,
};

export const ROOM_OPTION_NAMES = Object.keys(KINDS) as RoomOptionName[];
/** The roles presence_broadcast may list. */
export const BROADCAST_ROLES: readonly Exclude<Role, 'none'>[] = ['moderator', 'participant', 'visitor'];

export class RoomOptionError extends Error {
  override name = 'RoomOptionError';
}

export function isRoomOptionName(name: string): name is RoomOptionName {
  return Object.hasOwn(KINDS, name);
}

/** A typed value (YAML, JSON) checked against the option's kind. */
export function checkOptionValue(name: string, value: string | number | boolean | readonly string[] | null | undefined): RoomOptions[RoomOptionName] {
  if (!isRoomOptionName(name)) throw unknownOption(name);
  const kind = KINDS[name];
  const bad = () => new RoomOptionError(`room option '${name}': ${JSON.stringify(value)} is not ${describe(kind)}`);
  switch (kind) {
    case 'boolean':
      if (typeof value !== 'boolean') throw bad();
      return value;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw bad();
      return value;
    case 'string':
      if (typeof value !== 'string') throw bad();
      return value;
    case 'roles': {
      const list = typeof value === 'string' ? splitRoles(value) : value;
      if (!Array.isArray(list)) throw bad();
      return rolesOf(list, bad);
    }
  }
}

/**
 * change_room_option's text form: true/false (or 1/0), decimal integers, roles as a list separated by
 * commas, semicolons or spaces (brackets allowed). A bad name or value is a RoomOptionError that names it.
 */
export function parseOptionText(name: string, text: string): RoomOptions[RoomOptionName] {
  if (!isRoomOptionName(name)) throw unknownOption(name);
  const kind = KINDS[name];
  const bad = () => new RoomOptionError(`option ${name} takes ${describe(kind)}, got '${text}'`);
  switch (kind) {
    case 'boolean':
      if (text === 'true' || text === '1') return true;
      if (text === 'false' || text === '0') return false;
      throw bad();
    case 'integer':
      if (!/^\d{1,9}$/.test(text.trim())) throw bad();
      return Number(text.trim());
    case 'string':
      return text;
    case 'roles':
      return rolesOf(splitRoles(text.trim().replace(/^\[|\]$/g, '')), bad);
  }
}

/** An option's value as the commands show it (get_room_options): true/false, numbers, roles joined by commas. */
export function optionText(value: RoomOptions[RoomOptionName]): string {
  return Array.isArray(value) ? value.join(',') : String(value);
}

/** The error for a name that is no room option, with the closest one. */
export function unknownOption(name: string): RoomOptionError {
  const [close] = closest(name, ROOM_OPTION_NAMES, 1);
  return new RoomOptionError(`unknown room option '${name}'${close ? ` (did you mean '${close}'?)` : ''}; the options are ${ROOM_OPTION_NAMES.join(', ')}`);
}

/** Options with `changes` applied, each change checked. */
export function withOptions(base: Readonly<RoomOptions>, changes: Readonly<Record<string, string | number | boolean | readonly string[]>>): RoomOptions {
  const out: RoomOptions = { ...base, presence_broadcast: [...base.presence_broadcast] };
  for (const [name, value] of Object.entries(changes)) {
    const checked = checkOptionValue(name, value);
    if (isRoomOptionName(name)) assignOption(out, name, checked);
  }
  return out;
}

export function assignOption(target: RoomOptions, name: RoomOptionName, value: RoomOptions[RoomOptionName]): void {
  (target as unknown as Record<RoomOptionName, RoomOptions[RoomOptionName]>)[name] = value;
}

/** A stored options record (JSON) read back: unknown or broken entries fall back to the defaults. */
export function optionsFromStored(json: string, defaults: Readonly<RoomOptions>): RoomOptions {
  const out: RoomOptions = { ...defaults, presence_broadcast: [...defaults.presence_broadcast] };
  let parsed: Record<string, string | number | boolean | string[]>;
  try {
    parsed = JSON.parse(json) as Record<string, string | number | boolean | string[]>;
  } catch {
    return out;
  }
  for (const [name, value] of Object.entries(parsed)) {
    try {
      if (isRoomOptionName(name)) assignOption(out, name, checkOptionValue(name, value));
    } catch {
      // Keep the default for a value this version does not accept.
    }
  }
  return out;
}

function splitRoles(text: string): string[] {
  return text.split(/[\s,;]+/).filter(Boolean);
}

/** The roles a list names, each once in its order; `bad()` is thrown for a word that is no such role. */
export function rolesOf(list: readonly string[], bad: () => Error): Exclude<Role, 'none'>[] {
  const out: Exclude<Role, 'none'>[] = [];
  for (const item of list) {
    const role = BROADCAST_ROLES.find((r) => r === item);
    if (!role) throw bad();
    if (!out.includes(role)) out.push(role);
  }
  return out;
}

function describe(kind: OptionKind): string {
  switch (kind) {
    case 'boolean':
      return 'true or false';
    case 'integer':
      return 'a non-negative integer';
    case 'string':
      return 'a string';
    case 'roles':
      return 'a list of roles (moderator, participant, visitor)';
  }
}
