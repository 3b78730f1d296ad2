/**
 * What the srg_* arguments may hold. Problems are `bad_argument` errors naming the argument, so that the
 * commands pass them on as they are.
 */
import { InvalidJid, badArgument, nameprep, nodeprep, type ServerServices } from '@service/plugin-api';
import type { GroupRef } from './groups.js';
import { NAME_LENGTH } from './migrations.js';

/** The special members: every account of the group's vhost, every online one. */
export const ALL_USERS = '@all@';
export const ONLINE_USERS = '@online@';

function length(text: string): number {
  return [...text].length;
}

/** A vhost this server serves, normalized. */
export function servedHost(services: ServerServices, text: string, argument: string): string {
  let host: string;
  try {
    host = nameprep(text);
  } catch {
    throw badArgument(argument, `argument '${argument}': '${text}' is not a valid host name`);
  }
  const hosts = services.config().hosts;
  if (!hosts.includes(host)) throw badArgument(argument, `argument '${argument}': unknown virtual host '${text}': this server serves ${hosts.join(', ')}`);
  return host;
}

/**
 * A group identifier: not empty, at most 191 characters, without '@' (which separates a group from its
 * vhost in a displayed list, and marks the special members).
 */
export function groupName(text: string, argument: string): string {
  if (text === '') throw badArgument(argument, `argument '${argument}': a group identifier cannot be empty`);
  if (text.includes('@')) throw badArgument(argument, `argument '${argument}': '${text}' is not a group identifier: '@' separates a group from its vhost (group@vhost)`);
  if (length(text) > NAME_LENGTH) throw badArgument(argument, `argument '${argument}': group identifiers are limited to ${NAME_LENGTH} characters`);
  return text;
}

/** A label: what members see as the roster group's name, so no longer than a roster group name may be. */
export function label(text: string, argument: string): string {
  if (length(text) > NAME_LENGTH) throw badArgument(argument, `argument '${argument}': labels are limited to ${NAME_LENGTH} characters (they are roster group names)`);
  return text;
}

/** A displayed group: `group` on the same vhost as the group that displays it, or `group@vhost`. */
export function groupRef(services: ServerServices, text: string, from: string, argument: string): GroupRef {
  const at = text.indexOf('@');
  if (at < 0) return { host: from, name: groupName(text, argument) };
  return { host: servedHost(services, text.slice(at + 1), argument), name: groupName(text.slice(0, at), argument) };
}

/** An account's user name, normalized. */
export function userName(text: string, argument: string): string {
  try {
    return nodeprep(text);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(argument, `argument '${argument}': ${err.message}`);
    throw err;
  }
}
