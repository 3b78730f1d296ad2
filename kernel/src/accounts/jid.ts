/**
 * JIDs (`user@host/resource`): parsing, and normalization of each part close to RFC 7622 (PRECIS)
 * without a PRECIS library. Unicode normalization and general categories come from the platform's ICU;
 * the full PRECIS derived-property tables are not reproduced.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';
import { brand } from '../util/brand.js';

export interface Jid {
  user?: string;
  host: string;
  resource?: string;
}

export type JidPart = 'user' | 'host' | 'resource';

export class InvalidJid extends Error {
  constructor(
    message: string,
    /** The part at fault, so callers can name the argument. */
    readonly part: JidPart,
  ) {
    super(message);
    this.name = 'InvalidJid';
  }
}
brand(InvalidJid, 'InvalidJid');

/** The indexed column width for user names (utf8mb4 index limits of MySQL); counted in code points. */
export const MAX_USER_LENGTH = 191;
export const MAX_DOMAIN_LENGTH = 253;
export const MAX_LABEL_LENGTH = 63;
export const MAX_RESOURCE_BYTES = 1023;

/** RFC 7622 §3.3.1 forbids these in a localpart. */
const USER_FORBIDDEN = new Set(['"', '&', "'", '/', ':', '<', '>', '@']);
const ZERO_WIDTH_JOINERS = new Set(['\u200c', '\u200d']);

/** Normalizes a user name (localpart): NFKC, lower case. Throws `InvalidJid`. */
export function nodeprep(user: string): string {
  const normalized = user.normalize('NFKC').toLowerCase().normalize('NFKC');
  if (!normalized) throw new InvalidJid('user name is empty', 'user');
  const chars = [...normalized];
  if (chars.length > MAX_USER_LENGTH) {
    throw new InvalidJid(`user name is ${chars.length} characters long, the limit is ${MAX_USER_LENGTH}`, 'user');
  }
  for (const char of chars) {
    if (USER_FORBIDDEN.has(char)) throw new InvalidJid(`user name contains '${char}', which is not allowed`, 'user');
    const problem = disallowedCharacter(char);
    if (problem) throw new InvalidJid(`user name contains ${problem}, which is not allowed`, 'user');
  }
  return normalized;
}

/**
 * Normalizes a domain (host): lower case, NFKC, no trailing dot. Accepts IPv4 literals and bracketed IPv6
 * literals (`[::1]`). Lengths are checked on the ASCII (punycode) form, as DNS sees it. Throws `InvalidJid`.
 */
export function nameprep(domain: string): string {
  let normalized = domain.normalize('NFKC').toLowerCase();
  if (normalized.endsWith('.')) normalized = normalized.slice(0, -1);
  if (!normalized) throw new InvalidJid('domain is empty', 'host');
  if (normalized.startsWith('[') && normalized.endsWith(']')) {
    if (!isIPv6(normalized.slice(1, -1))) throw new InvalidJid(`domain '${domain}' is not a valid IPv6 literal`, 'host');
    return normalized;
  }
  if (isIPv4(normalized)) return normalized;
  let asciiLength = 0;
  for (const label of normalized.split('.')) {
    if (!label) throw new InvalidJid(`domain '${domain}' has an empty label`, 'host');
    for (const char of label) {
      if (!isDomainCharacter(char)) {
        throw new InvalidJid(`domain '${domain}' contains ${describeCharacter(char)}, which is not allowed`, 'host');
      }
    }
    const ascii = /^[\x00-\x7f]*$/.test(label) ? label : domainToASCII(label);
    if (!ascii) throw new InvalidJid(`domain '${domain}' has a label that is not a valid internationalized name`, 'host');
    if (ascii.length > MAX_LABEL_LENGTH) {
      throw new InvalidJid(`domain '${domain}' has a label longer than ${MAX_LABEL_LENGTH} characters`, 'host');
    }
    asciiLength += ascii.length + 1;
  }
  if (asciiLength - 1 > MAX_DOMAIN_LENGTH) {
    throw new InvalidJid(`domain '${domain}' is longer than ${MAX_DOMAIN_LENGTH} characters`, 'host');
  }
  return normalized;
}

/** Normalizes a resource: NFC, 1 to 1023 bytes of UTF-8, no control characters. Throws `InvalidJid`. */
export function resourceprep(resource: string): string {
  const normalized = resource.normalize('NFC');
  if (!normalized) throw new InvalidJid('resource is empty', 'resource');
  for (const char of normalized) {
    if (/[\p{Cc}\p{Cs}]/u.test(char)) {
      throw new InvalidJid(`resource contains ${describeCharacter(char)}, which is not allowed`, 'resource');
    }
  }
  const bytes = Buffer.byteLength(normalized, 'utf8');
  if (bytes > MAX_RESOURCE_BYTES) {
    throw new InvalidJid(`resource is ${bytes} bytes long, the limit is ${MAX_RESOURCE_BYTES}`, 'resource');
  }
  return normalized;
}

/**
 * Parses and normalizes `[user@]host[/resource]` (RFC 7622 §3.1: the resource starts at the first '/',
 * and may itself contain '@' and '/'). Throws `InvalidJid`.
 */
export function parseJid(text: string): Jid {
  const slash = text.indexOf('/');
  const rest = slash === -1 ? text : text.slice(0, slash);
  const at = rest.indexOf('@');
  const jid: Jid = { host: nameprep(at === -1 ? rest : rest.slice(at + 1)) };
  if (at !== -1) jid.user = nodeprep(rest.slice(0, at));
  if (slash !== -1) jid.resource = resourceprep(text.slice(slash + 1));
  return jid;
}

/** Formats the parts as given; they are expected to be normalized already. */
export function formatJid(jid: Jid): string {
  const bare = jid.user !== undefined ? `${jid.user}@${jid.host}` : jid.host;
  return jid.resource !== undefined ? `${bare}/${jid.resource}` : bare;
}

/** `user@host` (or `host`) without the resource; a string is parsed and normalized first. */
export function bareJid(jid: Jid | string): string {
  const { user, host } = typeof jid === 'string' ? parseJid(jid) : jid;
  return formatJid(user !== undefined ? { user, host } : { host });
}

/**
 * What is wrong with a character in a user name, or undefined when it is fine: whitespace, controls,
 * surrogates, unassigned and private-use code points, and invisible format characters (bidi overrides,
 * zero-width spaces) that would let two names look identical. The zero-width joiners stay allowed, as
 * some scripts need them.
 */
function disallowedCharacter(char: string): string | undefined {
  if (/\p{White_Space}/u.test(char)) return `whitespace (${codePoint(char)})`;
  if (/\p{Cc}/u.test(char)) return `a control character (${codePoint(char)})`;
  if (/\p{Cs}/u.test(char)) return `an unpaired surrogate (${codePoint(char)})`;
  if (/\p{Co}/u.test(char)) return `a private-use character (${codePoint(char)})`;
  if (/\p{Cn}/u.test(char)) return `an unassigned code point (${codePoint(char)})`;
  if (/\p{Cf}/u.test(char) && !ZERO_WIDTH_JOINERS.has(char)) return `an invisible formatting character (${codePoint(char)})`;
  return undefined;
}

/** ASCII letters, digits and hyphen; beyond ASCII, letters, combining marks and digits. */
function isDomainCharacter(char: string): boolean {
  if (char.length === 1 && char.charCodeAt(0) < 0x80) return /[a-z0-9-]/.test(char);
  return /[\p{L}\p{M}\p{Nd}]/u.test(char);
}

function describeCharacter(char: string): string {
  return /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(char) ? `'${char}'` : codePoint(char);
}

function codePoint(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}
