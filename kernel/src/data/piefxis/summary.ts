/**
 * What an XEP-0227 import did: counts per kind of data, and everything it left out with the reason. Shared by
 * the import (which fills it), the commands (which log it) and the importers of other servers' files (which
 * convert to XEP-0227 and hand the document to importPiefxisDocument).
 */

/** Something of the document that was not imported, and why. */
export interface SkippedItem {
  readonly host: string;
  /** The account's user name, when the item belongs to an account. */
  readonly user?: string;
  /** What was skipped: `account`, `host`, or an element's name and namespace (`{jabber:iq:roster}query`). */
  readonly what: string;
  readonly reason: string;
}

export interface ImportSummary {
  /** Hosts of the document imported (a host that is not served is skipped, see `skipped`). */
  hosts: number;
  /** Accounts created. */
  accounts: number;
  /** Accounts whose import failed while writing (each removed again, and listed in `skipped`). */
  failed: number;
  /** Elements imported per kind: `roster`, `vcard`, `private`, `offline`, `privacy`, `pep`, `muc`… (the contributing module's kind). */
  imported: Record<string, number>;
  skipped: SkippedItem[];
}

export function emptySummary(): ImportSummary {
  return { hosts: 0, accounts: 0, failed: 0, imported: {}, skipped: [] };
}
