/**
 * SASLprep (RFC 4013), the stringprep profile (RFC 3454) for user names and passwords in SASL: what both
 * sides of PLAIN and SCRAM (RFC 4616 §2, RFC 5802 §2.2) apply to a password before comparing or hashing it,
 * so that spellings a person cannot tell apart (a decomposed accent, a no-break space, a soft hyphen, a
 * compatibility character such as U+2168 ROMAN NUMERAL NINE) log in as the same password.
 *
 * 1. Map: non-ASCII spaces (table C.1.2) to U+0020, then "commonly mapped to nothing" (B.1) to nothing.
 *    U+200B is in both tables; RFC 4013 lists the space mapping first, and so does libidn (Prosody, GNU SASL),
 *    so it becomes a space.
 * 2. Normalize: NFKC.
 * 3. Prohibit C.1.2, C.2.1, C.2.2, C.3-C.9 (the shared `prohibitedCharacter` of stringprep.ts, with the ASCII
 *    space allowed).
 * 4. The bidi rule of RFC 3454 §6.
 * Unassigned code points (A.1) are refused in stored strings (a password being set) and allowed in queries
 * (a password being checked), as RFC 3454 §7 says. As for JIDs, "unassigned" and the categories are those of
 * the platform's Unicode, not Unicode 3.2's (see stringprep.ts).
 *
 * Problems never quote the text's own characters (it is a password): they name code points of characters
 * that are not allowed at all, and describe the bidi problem without showing letters.
 */
import { MAPPED_TO_NOTHING, NON_ASCII_SPACE, bidiViolation, prohibitedCharacter } from '@service/plugin-api';

/** `stored`: a string being stored (unassigned code points refused); `query`: one being compared (allowed). */
export type SaslprepUse = 'stored' | 'query';

export class SaslprepError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SaslprepError';
  }
}

/** Every character `prohibitedCharacter` may refuse (a superset: the ASCII space, unassigned code points of a query). */
const MAYBE_PROHIBITED = /[\p{White_Space}\p{Cc}\p{Cs}\p{Co}\p{Cn}\p{Cf}\p{Noncharacter_Code_Point}\ufff9-\ufffd\u2ff0-\u2fff\u31ef]/u;

/** Steps 1 and 2: the mapping and NFKC. Never fails; `saslprepProblem` says whether the result may be used. */
export function saslprepMap(text: string): string {
  return text.replace(NON_ASCII_SPACE, ' ').replace(MAPPED_TO_NOTHING, '').normalize('NFKC');
}

/**
 * Steps 3 and 4 (and the unassigned check of stored strings) on a mapped and normalized string: what SASLprep
 * refuses in it, or undefined. The phrase follows "the password" or "the user name".
 */
export function saslprepProblem(prepared: string, use: SaslprepUse): string | undefined {
  const chars = [...prepared];
  // Most strings hold none of the characters prohibitedCharacter looks at: one test says so for all of them.
  if (MAYBE_PROHIBITED.test(prepared)) {
    for (const char of chars) {
      const problem = prohibitedCharacter(char, { allowSpace: true, refuseUnassigned: use === 'stored' });
      if (problem) return `contains ${problem}, which SASLprep (RFC 4013) prohibits`;
    }
  }
  const bidi = bidiViolation(chars);
  if (bidi?.kind === 'mixed') return 'mixes right-to-left and left-to-right characters, which SASLprep (RFC 3454 §6) prohibits';
  if (bidi) return `has right-to-left characters, so SASLprep (RFC 3454 §6) requires it to ${bidi.kind === 'first' ? 'start' : 'end'} with one`;
  return undefined;
}

/** The whole profile: the prepared string, or a SaslprepError naming the problem. */
export function saslprep(text: string, use: SaslprepUse = 'query'): string {
  const prepared = saslprepMap(text);
  const problem = saslprepProblem(prepared, use);
  if (problem) throw new SaslprepError(problem);
  return prepared;
}
