/**
 * The XEP-0227 import: the steps for one `<host>` and one `<user>` (checked first, then written), and
 * importPiefxisDocument, which imports a parsed `<server-data xmlns='urn:xmpp:pie:0'>` document. Other
 * servers' importers (Prosody, jabberd14) convert their files to such a document and call it; import_piefxis
 * streams a file through the same steps (import-file.ts).
 *
 * Semantics (docs/data.md, "Import semantics"):
 * - Everything is checked before anything is written: a host not served here, a user name that is not a
 *   valid JID local part, a user twice, malformed credentials, or data a module refuses (its `checkAccount`)
 *   fails the whole import, naming the problem, and nothing is imported.
 * - An account that exists here is skipped (listed with the reason); nothing of the file is merged into it.
 * - Each account is imported whole or not at all: when writing its data fails, the account is removed again
 *   (remove_user, so every module drops what it wrote) and listed as failed; the import goes on.
 * - An element of `<user>` that no running module claims (mod_pubsub disabled…) is listed as skipped.
 * - Host-level data (children of `<host>` other than `<user>`: MUC rooms…) goes to the module that claims
 *   it, checked with the rest and imported after the host's accounts; what exists here is left as it is.
 */
import { CommandError, PortabilityError, nodeprep, type AccountPortability, type XmlElement } from '@service/plugin-api';
import type { KernelServices } from '../../modules/services.js';
import { NS_SCRAM, createAccount, credentialsOf, serverScramHashes } from './credentials.js';
import { isPieNs } from './reader.js';
import { emptySummary, type ImportSummary } from './summary.js';

export type { ImportSummary, SkippedItem } from './summary.js';

/** What is wrong with the data being imported: the whole import stops, nothing written. */
export class ImportProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImportProblem';
  }
}

function describe(element: XmlElement): string {
  return element.ns ? `<${element.local} xmlns='${element.ns}'>` : `<${element.local}>`;
}

/** The host of a `<host jid>`, normalized, when this server serves it. */
export function checkHost(services: KernelServices, jid: string): string {
  try {
    return services.accounts.servedHost(jid);
  } catch (err) {
    if (err instanceof CommandError) throw new ImportProblem(`the host '${jid}' is not served here (this server serves ${services.config().hosts.join(', ')})`);
    throw err;
  }
}

interface Claimed {
  readonly contribution: AccountPortability;
  readonly elements: XmlElement[];
}

/** The `<user>`'s data elements by the contribution that claims them, and those nobody claims. */
function sortElements(services: KernelServices, host: string, user: XmlElement): { claimed: Claimed[]; unclaimed: XmlElement[] } {
  const registry = services.portability;
  const claimed = new Map<AccountPortability, XmlElement[]>();
  const unclaimed: XmlElement[] = [];
  for (const element of user.elements()) {
    if (element.is('scram-credentials', NS_SCRAM)) continue;
    const claim = registry.claimOf(host, element);
    if (!claim) unclaimed.push(element);
    else {
      const list = claimed.get(claim.contribution);
      if (list) list.push(element);
      else claimed.set(claim.contribution, [element]);
    }
  }
  return { claimed: [...claimed].map(([contribution, elements]) => ({ contribution, elements })), unclaimed };
}

function userName(user: XmlElement): string {
  const name = user.attr('name');
  if (!name) throw new ImportProblem('<user> has no name');
  try {
    return nodeprep(name);
  } catch (err) {
    throw new ImportProblem(`the user name '${name}' is not a valid JID local part: ${(err as Error).message}`);
  }
}

/**
 * Checks a `<user>` of a served host without writing anything; returns the normalized user name. `seen`
 * collects the accounts of the import, to find one that appears twice.
 */
export async function checkUser(services: KernelServices, host: string, user: XmlElement, seen: Set<string>): Promise<string> {
  if (!user.is('user') || !isPieNs(user.ns)) throw new ImportProblem(`unexpected ${describe(user)} in <host> (only <user>)`);
  const name = userName(user);
  const key = `${name}@${host}`;
  if (seen.has(key)) throw new ImportProblem(`the user ${key} appears twice`);
  seen.add(key);
  try {
    credentialsOf(user, serverScramHashes(services));
  } catch (err) {
    throw new ImportProblem(`the user ${key}: ${(err as Error).message}`);
  }
  for (const { contribution, elements } of sortElements(services, host, user).claimed) {
    try {
      await contribution.checkAccount?.(name, host, elements);
    } catch (err) {
      if (err instanceof PortabilityError) throw new ImportProblem(`the user ${key}: ${err.message}`);
      throw err;
    }
  }
  return name;
}

/** Imports a checked `<user>` of a served host into the summary: skipped, created, or failed and undone. */
export async function importUser(services: KernelServices, host: string, user: XmlElement, summary: ImportSummary): Promise<void> {
  const name = userName(user);
  if (await services.accounts.exists(name, host)) {
    summary.skipped.push({ host, user: name, what: 'account', reason: 'the account exists here: left as it is, nothing of the file merged into it' });
    return;
  }
  const { claimed, unclaimed } = sortElements(services, host, user);
  const counts: Record<string, number> = {};
  let created = false;
  try {
    const notes = await createAccount(services, name, host, credentialsOf(user, serverScramHashes(services)));
    created = true;
    for (const { contribution, elements } of claimed) {
      const stored = await contribution.importAccount(name, host, elements);
      counts[contribution.kind] = (counts[contribution.kind] ?? 0) + (typeof stored === 'number' ? stored : elements.length);
    }
    for (const note of notes) summary.skipped.push({ host, user: name, what: 'password', reason: note });
  } catch (err) {
    summary.failed++;
    let undone = '';
    if (created) {
      try {
        await services.accounts.unregister(name, host);
        undone = '; the account was removed again';
      } catch (undo) {
        undone = `; removing the account again failed too: ${(undo as Error).message}`;
      }
    }
    services.logger.error({ err, user: name, host }, 'XEP-0227 import of an account failed');
    summary.skipped.push({ host, user: name, what: 'account', reason: `import failed: ${(err as Error).message}${undone}` });
    return;
  }
  summary.accounts++;
  for (const [kind, n] of Object.entries(counts)) summary.imported[kind] = (summary.imported[kind] ?? 0) + n;
  for (const element of unclaimed) {
    summary.skipped.push({ host, user: name, what: `{${element.ns ?? ''}}${element.local}`, reason: 'no running module imports it (is the module that stores it enabled?)' });
  }
}

/** Checks a child of `<host>` other than `<user>` (MUC rooms…) with the module that claims it; writes nothing. */
export async function checkHostElement(services: KernelServices, host: string, element: XmlElement): Promise<void> {
  const claim = services.portability.hostClaimOf(host, element);
  if (!claim?.contribution.checkHost) return;
  try {
    await claim.contribution.checkHost(host, [element]);
  } catch (err) {
    if (err instanceof PortabilityError) throw new ImportProblem(`the host ${host}: ${err.message}`);
    throw err;
  }
}

/** Imports a checked child of `<host>` through the module that claims it; unclaimed, it is listed as skipped. */
export async function importHostElement(services: KernelServices, host: string, element: XmlElement, summary: ImportSummary): Promise<void> {
  const what = `{${element.ns ?? ''}}${element.local}`;
  const claim = services.portability.hostClaimOf(host, element);
  if (!claim) {
    summary.skipped.push({ host, what, reason: 'no running module imports this host-level data (is the module that stores it enabled?)' });
    return;
  }
  const { kind } = claim.contribution;
  try {
    const result = await claim.contribution.importHost(host, [element]);
    summary.imported[kind] = (summary.imported[kind] ?? 0) + result.imported;
    for (const skipped of result.skipped ?? []) summary.skipped.push({ host, ...skipped });
  } catch (err) {
    summary.failed++;
    services.logger.error({ err, host, what }, 'XEP-0227 import of host data failed');
    summary.skipped.push({ host, what, reason: `import failed: ${(err as Error).message}` });
  }
}

function hostsOf(document: XmlElement): XmlElement[] {
  if (document.is('host') && isPieNs(document.ns)) return [document];
  if (!document.is('server-data') || !isPieNs(document.ns)) {
    throw new ImportProblem(`the document is ${describe(document)}, not a XEP-0227 <server-data xmlns='urn:xmpp:pie:0'>`);
  }
  return document.elements().map((host) => {
    if (!host.is('host') || !isPieNs(host.ns)) throw new ImportProblem(`unexpected ${describe(host)} in <server-data> (only <host jid=…>)`);
    return host;
  });
}

/**
 * Imports a XEP-0227 document (see the semantics above). A problem of the data is a CommandError
 * (bad_argument) naming it, thrown before anything is written; `report` hears how many of the document's
 * users are done.
 */
export async function importPiefxisDocument(
  services: KernelServices,
  document: XmlElement,
  report?: (done: number, total: number) => void,
): Promise<ImportSummary> {
  const summary = emptySummary();
  const checked: Array<{ host: string; users: XmlElement[]; others: XmlElement[] }> = [];
  try {
    const seen = new Set<string>();
    for (const hostElement of hostsOf(document)) {
      const jid = hostElement.attr('jid');
      if (!jid) throw new ImportProblem('<host> has no jid');
      const host = checkHost(services, jid);
      const users: XmlElement[] = [];
      const others: XmlElement[] = [];
      for (const child of hostElement.elements()) {
        if (child.is('user') && isPieNs(child.ns)) {
          await checkUser(services, host, child, seen);
          users.push(child);
        } else {
          await checkHostElement(services, host, child);
          others.push(child);
        }
      }
      checked.push({ host, users, others });
    }
  } catch (err) {
    if (err instanceof ImportProblem) throw new CommandError('bad_argument', `XEP-0227 data: ${err.message}; nothing was imported`);
    throw err;
  }
  const total = checked.reduce((n, h) => n + h.users.length, 0);
  let done = 0;
  for (const { host, users, others } of checked) {
    summary.hosts++;
    for (const user of users) {
      await importUser(services, host, user, summary);
      report?.(++done, total);
    }
    for (const other of others) await importHostElement(services, host, other, summary);
  }
  return summary;
}
