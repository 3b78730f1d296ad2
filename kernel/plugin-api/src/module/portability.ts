/**
 * The portability contract (XEP-0227, PIEFXIS): how a module hands its data of an account to an export, and
 * takes it back from an import. Accounts and their password keys are the server's; everything else an
 * account owns (roster, vCard, private XML, offline messages, privacy lists, PEP nodes…) belongs to the
 * module that stores it, which alone knows how to turn it into the XEP-0227 child elements of `<user>` and
 * back. A module lists what it provides in its `start()` result (`ModuleInstance.portability`); the server
 * calls it for each account of an export or import while the module runs, and forgets it when it stops.
 */
import type { XmlElement } from '../xml/element.js';

/** An element of `<user>` a contribution claims on import: its local name and namespace. */
export interface PortableElementName {
  readonly name: string;
  readonly ns: string;
}

/** Why an element of `<user>` cannot be imported: thrown by `checkAccount` / `importAccount`. */
export class PortabilityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PortabilityError';
  }
}

export interface AccountPortability {
  /** What it carries, one word, for import summaries and progress: `roster`, `vcard`, `offline`… */
  readonly kind: string;
  /** The child elements of `<user>` it takes on import; an element nobody claims is reported as skipped. */
  readonly claims: readonly PortableElementName[];
  /**
   * Its XEP-0227 child elements of `<user>` for the account (none when it stores nothing for it). Called for
   * every account of a host, one account at a time: read only that account's data.
   */
  exportAccount(user: string, host: string): Promise<XmlElement[]>;
  /**
   * Throws a `PortabilityError` naming what is wrong with the elements (the ones it claims, of one `<user>`)
   * without writing anything: an import checks every account of a file before it writes the first.
   */
  checkAccount?(user: string, host: string, elements: readonly XmlElement[]): void | Promise<void>;
  /**
   * Stores the claimed elements for the account, which the import has just created (it holds nothing of
   * this module yet). Returns how many records it stored (roster items, messages…) for the summary, or
   * nothing to count the elements. When it throws, the import removes the account again (remove_user).
   */
  importAccount(user: string, host: string, elements: readonly XmlElement[]): Promise<number | void>;
}

/** What a host-level import did: records stored, and what was left out (a room that exists…) with why. */
export interface HostImportResult {
  readonly imported: number;
  readonly skipped?: ReadonlyArray<{ readonly what: string; readonly reason: string }>;
}

/**
 * Data of a host rather than of an account (MUC rooms…): child elements of `<host>` next to its `<user>`s.
 * Exported after the host's accounts; imported after being checked with the rest of the file.
 */
export interface HostPortability {
  readonly kind: string;
  /** The child elements of `<host>` it takes on import. */
  readonly claims: readonly PortableElementName[];
  exportHost(host: string): Promise<XmlElement[]>;
  /** Throws a `PortabilityError` naming what is wrong, without writing anything. */
  checkHost?(host: string, elements: readonly XmlElement[]): void | Promise<void>;
  /** Stores what does not exist here yet; what exists is left as it is and listed in `skipped`. */
  importHost(host: string, elements: readonly XmlElement[]): Promise<HostImportResult>;
}
