/**
 * The parts of stringprep (RFC 3454) that the JID profiles (Nodeprep, Nameprep, Resourceprep: jid.ts) and
 * SASLprep (RFC 4013: saslprep.ts) share: the mapping tables B.1 and C.1.2, the prohibition tables C.1-C.9
 * (by Unicode general category where a category covers a table) and the bidi rule of §6, on the range tables
 * of bidi-tables.ts. Unicode normalization and categories are the platform's (ICU), not Unicode 3.2's.
 */
import { L_CAT, RAND_AL_CAT, inRanges } from './bidi-tables.js';

/** Table B.1, "commonly mapped to nothing" (soft hyphen, joiners, variation selectors, BOM...). Global: for `replace`. */
export const MAPPED_TO_NOTHING = /[\u00ad\u034f\u1806\u180b-\u180d\u200b-\u200d\u2060\ufe00-\ufe0f\ufeff]/gu;

/** Table C.1.2, the non-ASCII space characters (U+200B ZERO WIDTH SPACE included, as RFC 3454 lists it). Global: for `replace`. */
export const NON_ASCII_SPACE = /[\u00a0\u1680\u2000-\u200b\u202f\u205f\u3000]/gu;

const ZERO_WIDTH_JOINERS = new Set(['\u200c', '\u200d']);

/**
 * What is wrong with a character (after normalization), or undefined when it is fine: the stringprep
 * prohibition tables of RFC 3454, by general category where Unicode's categories cover a table.
 * - C.1.1 ASCII space (unless `allowSpace`), C.1.2 other spaces, and U+2028, U+2029 of C.2.2: whitespace.
 * - C.2.1, C.2.2: control characters (category Cc); the rest of C.2.2 is category Cf, below.
 * - C.3: private use (Co). C.4: noncharacters. C.5: surrogates (Cs).
 * - C.6: U+FFF9-U+FFFD, inappropriate for plain text (the replacement character among them).
 * - C.7: ideographic description characters, U+2FF0-U+2FFB and those added since (U+2FFC-U+2FFF, U+31EF).
 * - C.8 (bidi controls, and U+0340, U+0341, which normalization turns into U+0300, U+0301), C.9 (tags), and
 *   every other invisible formatting character (Cf: all of them are in C.2.2, C.8, C.9, B.1, or were
 *   unassigned in Unicode 3.2), except the zero-width joiners, which some scripts need.
 * - Unassigned code points (stringprep's A.1, here of the platform's Unicode), when `refuseUnassigned`
 *   (stored strings; RFC 3454 §7 lets queries keep them).
 */
export function prohibitedCharacter(char: string, options: { allowSpace: boolean; refuseUnassigned: boolean }): string | undefined {
  if (/\p{White_Space}/u.test(char) && !(options.allowSpace && char === ' ')) return `whitespace (${codePoint(char)})`;
  if (/\p{Cc}/u.test(char)) return `a control character (${codePoint(char)})`;
  if (/\p{Cs}/u.test(char)) return `an unpaired surrogate (${codePoint(char)})`;
  if (/\p{Co}/u.test(char)) return `a private-use character (${codePoint(char)})`;
  if (/\p{Noncharacter_Code_Point}/u.test(char)) return `a noncharacter (${codePoint(char)})`;
  if (/[\ufff9-\ufffd]/u.test(char)) return `a character inappropriate for plain text (${codePoint(char)})`;
  if (/[\u2ff0-\u2fff\u31ef]/u.test(char)) return `an ideographic description character (${codePoint(char)})`;
  if (options.refuseUnassigned && /\p{Cn}/u.test(char)) return `an unassigned code point (${codePoint(char)})`;
  if (/\p{Cf}/u.test(char) && !ZERO_WIDTH_JOINERS.has(char)) return `an invisible formatting character (${codePoint(char)})`;
  return undefined;
}

/** How a string breaks the bidi rule (see `bidiProblem`). */
export type BidiViolation =
  | { readonly kind: 'mixed'; readonly rtl: string; readonly ltr: string }
  | { readonly kind: 'first' | 'last'; readonly char: string };

/**
 * The bidi rule of RFC 3454 §6 (its first requirement, no C.8 characters, is `prohibitedCharacter`'s): a
 * string with a right-to-left character (RandALCat: Hebrew, Arabic, Syriac, Thaana...) must have no
 * left-to-right one (LCat) and must start and end with a right-to-left one. Digits, punctuation and combining
 * marks are neither, so "\u05d0\u05d1" and "\u05d01\u05d1" pass while "\u05d0a", "1\u05d0", "\u05d01" and a
 * name ending in a combining vowel point do not.
 * (RFC 5893, IDNA2008's bidi rule, is laxer about digits and marks; stringprep servers apply this one.)
 */
export function bidiViolation(chars: readonly string[]): BidiViolation | undefined {
  const rtl = chars.find((char) => inRanges(RAND_AL_CAT, char.codePointAt(0)!));
  if (rtl === undefined) return undefined;
  const ltr = chars.find((char) => inRanges(L_CAT, char.codePointAt(0)!));
  if (ltr !== undefined) return { kind: 'mixed', rtl, ltr };
  const first = chars[0]!;
  const last = chars[chars.length - 1]!;
  if (!inRanges(RAND_AL_CAT, first.codePointAt(0)!)) return { kind: 'first', char: first };
  if (!inRanges(RAND_AL_CAT, last.codePointAt(0)!)) return { kind: 'last', char: last };
  return undefined;
}

/** `bidiViolation` as a problem phrased to follow the part's name, quoting the characters at fault. */
export function bidiProblem(chars: readonly string[]): string | undefined {
  const violation = bidiViolation(chars);
  if (!violation) return undefined;
  if (violation.kind === 'mixed') {
    return `mixes right-to-left and left-to-right characters (${describeCharacter(violation.rtl)} and ${describeCharacter(violation.ltr)}), which is not allowed`;
  }
  return `has right-to-left characters, so it must ${violation.kind === 'first' ? 'start' : 'end'} with one, not with ${describeCharacter(violation.char)}`;
}

/** A visible character quoted; an invisible one, or a combining mark (which would sit on the quote), by code point. */
export function describeCharacter(char: string): string {
  return /[\p{L}\p{N}\p{P}\p{S}]/u.test(char) ? `'${char}'` : codePoint(char);
}

export function codePoint(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}
