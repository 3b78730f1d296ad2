/**
 * JIDs (`user@host/resource`): parsing, and normalization of each part close to RFC 7622 (PRECIS)
 * without a PRECIS library. Unicode normalization and general categories come from the platform's ICU;
 * the full PRECIS derived-property tables are not reproduced.
 *
 * Every part also refuses what stringprep prohibits (RFC 3454, as profiled by Nameprep, RFC 3491, and by
 * the Nodeprep and Resourceprep of RFC 6122): the characters of tables C.1 to C.9 and strings that break the
 * bidi rule of RFC 3454 §6 (`prohibitedCharacter` and `bidiProblem` of stringprep.ts, which SASLprep shares).
 * Where stringprep's mapping step (table B.1) would silently remove a character, this code differs: the
 * zero-width joiners U+200C and U+200D are kept (PRECIS allows them in context); the invisible formatting
 * characters among the rest (soft hyphen, U+200B, U+2060, U+FEFF) are refused; and variation selectors,
 * U+034F and the Mongolian U+1806, U+180B-U+180D are kept. Characters assigned after Unicode 3.2 (emoji, for one) are accepted when the
 * platform's Unicode has them, where stringprep would refuse them as unassigned.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';
import { bidiProblem, describeCharacter, prohibitedCharacter } from './stringprep.js';

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

/** The indexed column width for user names (utf8mb4 index limits of MySQL); counted in code points. */
export const MAX_USER_LENGTH = 191;
export const MAX_DOMAIN_LENGTH = 253;
export const MAX_LABEL_LENGTH = 63;
export const MAX_RESOURCE_BYTES = 1023;

/** RFC 7622 §3.3.1 forbids these in a localpart. */
const USER_FORBIDDEN = new Set(['"', '&', "'", '/', ':', '<', '>', '@']);

/**
 * Remembers what a preparation returned: the same few names come back on every stanza and request (HTTP Basic
 * prepares the caller's name on each call), and a preparation costs microseconds of Unicode tables. Only
 * successes are kept (a refusal is rare and throws a fresh error); bounded, it starts over when full.
 */
const MEMO_LIMIT = 50_000;

function memoized(prepare: (text: string) => string): (text: string) => string {
  const memo = new Map<string, string>();
  return (text) => {
    const known = memo.get(text);
    if (known !== undefined) return known;
    const prepared = prepare(text);
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(text, prepared);
    return prepared;
  };
}

/** Normalizes a user name (localpart): NFKC, lower case. Throws `InvalidJid`. */
export const nodeprep = memoized(prepareNode);

function prepareNode(user: string): string {
  const normalized = user.normalize('NFKC').toLowerCase().normalize('NFKC');
  if (!normalized) throw new InvalidJid('user name is empty', 'user');
  const chars = [...normalized];
  if (chars.length > MAX_USER_LENGTH) {
    throw new InvalidJid(`user name is ${chars.length} characters long, the limit is ${MAX_USER_LENGTH}`, 'user');
  }
  for (const char of chars) {
    if (USER_FORBIDDEN.has(char)) throw new InvalidJid(`user name contains '${char}', which is not allowed`, 'user');
    const problem = prohibitedCharacter(char, { allowSpace: false, refuseUnassigned: true });
    if (problem) throw new InvalidJid(`user name contains ${problem}, which is not allowed`, 'user');
  }
  const bidi = bidiProblem(chars);
  if (bidi) throw new InvalidJid(`user name ${bidi}`, 'user');
  return normalized;
}

/**
 * Normalizes a domain (host): lower case, NFKC, no trailing dot. Accepts IPv4 literals and bracketed IPv6
 * literals (`[::1]`). Lengths are checked on the ASCII (punycode) form, as DNS sees it. Throws `InvalidJid`.
 */
export const nameprep = memoized(prepareName);

function prepareName(domain: string): string {
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
    const chars = [...label];
    for (const char of chars) {
      if (!isDomainCharacter(char)) {
        const problem = prohibitedCharacter(char, { allowSpace: false, refuseUnassigned: true }) ?? describeCharacter(char);
        throw new InvalidJid(`domain '${domain}' contains ${problem}, which is not allowed`, 'host');
      }
    }
    // Per label, as IDNA applies Nameprep (RFC 3490 §4.1); before the punycode conversion, whose own
    // checks would only say that the label is not a valid internationalized name.
    const bidi = bidiProblem(chars);
    if (bidi) throw new InvalidJid(`domain '${domain}': the label '${label}' ${bidi}`, 'host');
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

/**
 * Normalizes a resource: NFC, other spaces mapped to U+0020 (as RFC 7622's OpaqueString does, and as
 * Resourceprep's NFKC does for all but U+1680), 1 to 1023 bytes of UTF-8. Case and the ASCII space are
 * kept; the characters stringprep prohibits, other than unassigned code points, are refused, and so are
 * strings that break the bidi rule. Throws `InvalidJid`.
 */
export function resourceprep(resource: string): string {
  const normalized = resource.normalize('NFC').replace(/\p{Zs}/gu, ' ');
  if (!normalized) throw new InvalidJid('resource is empty', 'resource');
  const chars = [...normalized];
  for (const char of chars) {
    const problem = prohibitedCharacter(char, { allowSpace: true, refuseUnassigned: false });
    if (problem) throw new InvalidJid(`resource contains ${problem}, which is not allowed`, 'resource');
  }
  const bidi = bidiProblem(chars);
  if (bidi) throw new InvalidJid(`resource ${bidi}`, 'resource');
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

/** ASCII letters, digits and hyphen; beyond ASCII, letters, combining marks and digits. */
function isDomainCharacter(char: string): boolean {
  if (char.length === 1 && char.charCodeAt(0) < 0x80) return /[a-z0-9-]/.test(char);
  return /[\p{L}\p{M}\p{Nd}]/u.test(char);
}
