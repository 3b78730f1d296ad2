/**
 * The vCard field names the *_vcard commands accept: XEP-0054's, as the spec says. get_vcard/set_vcard
 * address the fields that hold one value (FN, NICKNAME, BDAY…); the *_vcard2 commands address the parts
 * of structured fields (N FAMILY, TEL HOME, EMAIL USERID…).
 *
 * Names are checked, not passed through: a typo (`NICKNAM`) would otherwise write an element no client
 * reads, and the command would still answer 0. Writing text into a structured field (`set_vcard N`) or
 * into one of ADR's type flags would produce a vCard XEP-0054 clients cannot parse, so those are refused
 * with a pointer to the right command or part.
 */
import { badArgument } from '@service/plugin-api';

/** Fields holding a single value: get_vcard, set_vcard, set_nickname. */
export const SINGLE_FIELDS: readonly string[] = [
  'FN', 'NICKNAME', 'BDAY', 'TITLE', 'ROLE', 'URL', 'DESC', 'NOTE', 'JABBERID', 'MAILER', 'TZ', 'UID', 'REV', 'PRODID', 'SORT-STRING', 'VERSION',
];

/**
 * Structured fields and their parts that carry a value. For TEL and EMAIL, a type flag (HOME, WORK, CELL…)
 * selects the entries carrying that flag and the value is their NUMBER or USERID (mod_vcard's fields.ts).
 * ADR and LABEL flags, CLASS and AGENT's nested vCard carry no text of their own, so they are left out.
 */
export const PARTS: Readonly<Record<string, readonly string[]>> = {
  N: ['FAMILY', 'GIVEN', 'MIDDLE', 'PREFIX', 'SUFFIX'],
  ADR: ['POBOX', 'EXTADD', 'STREET', 'LOCALITY', 'REGION', 'PCODE', 'CTRY'],
  LABEL: ['LINE'],
  TEL: ['NUMBER', 'HOME', 'WORK', 'VOICE', 'FAX', 'PAGER', 'MSG', 'CELL', 'VIDEO', 'BBS', 'MODEM', 'ISDN', 'PCS', 'PREF'],
  EMAIL: ['USERID', 'HOME', 'WORK', 'INTERNET', 'PREF', 'X400'],
  ORG: ['ORGNAME', 'ORGUNIT'],
  GEO: ['LAT', 'LON'],
  PHOTO: ['TYPE', 'BINVAL', 'EXTVAL'],
  LOGO: ['TYPE', 'BINVAL', 'EXTVAL'],
  SOUND: ['PHONETIC', 'BINVAL', 'EXTVAL'],
  KEY: ['TYPE', 'CRED'],
  CATEGORIES: ['KEYWORD'],
};

const STRUCTURED = Object.keys(PARTS);

function normalize(text: string): string {
  return text.trim().toUpperCase();
}

/** Up to two candidates within a small edit distance, for "did you mean". */
function nearest(word: string, candidates: readonly string[]): string[] {
  const distance = (a: string, b: string) => {
    let row = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      const next = [i];
      for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row = next;
    }
    return row[b.length]!;
  };
  const limit = Math.max(1, Math.floor(word.length / 3));
  return candidates
    .map((c) => ({ c, d: distance(word, c) }))
    .filter(({ d }) => d <= limit)
    .sort((a, b) => a.d - b.d)
    .slice(0, 2)
    .map(({ c }) => c);
}

function unknownField(name: string): Error {
  const hint = nearest(normalize(name), [...SINGLE_FIELDS, ...STRUCTURED]);
  return badArgument(
    'name',
    `'${name}' is not a vCard field name (XEP-0054)${hint.length ? `; did you mean ${hint.join(' or ')}?` : '.'} ` +
      `Single fields: ${SINGLE_FIELDS.join(', ')}. Structured fields (with a subname): ${STRUCTURED.join(', ')}`,
  );
}

/** The normalized name of a single-value field, for get_vcard/set_vcard (`command` names the caller). */
export function singleField(name: string, command: string): string {
  const upper = normalize(name);
  if (SINGLE_FIELDS.includes(upper)) return upper;
  const parts = PARTS[upper];
  if (parts) throw badArgument('name', `${upper} is a structured field: use ${command}2 with a subname (${parts.join(', ')})`);
  throw unknownField(name);
}

/** The normalized name and subname of a part of a structured field, for the *_vcard2 commands. */
export function partField(name: string, subname: string, command: string): { name: string; subname: string } {
  const upper = normalize(name);
  const parts = PARTS[upper];
  if (!parts) {
    if (SINGLE_FIELDS.includes(upper)) throw badArgument('name', `${upper} holds a single value and has no parts: use ${command.replace(/2(_multi)?$/, '')}`);
    throw unknownField(name);
  }
  const sub = normalize(subname);
  if (parts.includes(sub)) return { name: upper, subname: sub };
  const hint = nearest(sub, parts);
  throw badArgument(
    'subname',
    `'${subname}' is not a part of ${upper}${hint.length ? `; did you mean ${hint.join(' or ')}?` : '.'} The parts of ${upper} are ${parts.join(', ')}`,
  );
}
