/**
 * import_piefxis: a XEP-0227 file (and the per-host files an index includes) imported in two streamed
 * passes, so that a file of any size is read in bounded memory: the first checks everything (XML, hosts,
 * users, every module's data) and writes nothing; only when all of it is right does the second import the
 * accounts, one at a time, reporting progress. The semantics are import.ts's.
 */
import { stat } from 'node:fs/promises';
import { XmlElement, badArgument } from '@service/plugin-api';
import type { KernelServices } from '../../modules/services.js';
import { ImportProblem, checkHost, checkHostElement, checkUser, importHostElement, importUser } from './import.js';
import { PiefxisFormatError, readPiefxisFile, type Location } from './reader.js';
import { emptySummary, type ImportSummary } from './summary.js';

export async function importPiefxisFile(services: KernelServices, path: string, report?: (done: number, total: number) => void): Promise<ImportSummary> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw badArgument('file', `no such file: ${path}`);
  }
  if (!info.isFile()) throw badArgument('file', `${path} is not a file`);

  // Pass 1: check, write nothing.
  const seen = new Set<string>();
  const hosts = new Map<string, string>();
  let total = 0;
  const at = (where: Location, err: unknown): never => {
    if (err instanceof ImportProblem) throw new PiefxisFormatError(where.file, where.line, err.message);
    throw err;
  };
  try {
    await readPiefxisFile(path, {
      host: (jid, where) => {
        try {
          hosts.set(jid, checkHost(services, jid));
        } catch (err) {
          at(where, err);
        }
      },
      user: async (jid, user, where) => {
        try {
          await checkUser(services, hosts.get(jid)!, user, seen);
          total++;
        } catch (err) {
          at(where, err);
        }
      },
      hostElement: async (jid, element, where) => {
        try {
          await checkHostElement(services, hosts.get(jid)!, element);
        } catch (err) {
          at(where, err);
        }
      },
    });
  } catch (err) {
    throw asArgumentError(err);
  }

  // Pass 2: import.
  const summary = emptySummary();
  let done = 0;
  try {
    await readPiefxisFile(path, {
      host: () => {
        summary.hosts++;
      },
      user: async (jid, user: XmlElement) => {
        await importUser(services, hosts.get(jid)!, user, summary);
        report?.(++done, total);
      },
      hostElement: (jid, element) => importHostElement(services, hosts.get(jid)!, element, summary),
    });
  } catch (err) {
    // The file changed between the passes: what was imported stays, and is said.
    if (err instanceof PiefxisFormatError) throw badArgument('file', `${err.message} (the file changed during the import; ${summary.accounts} account(s) were imported before)`);
    throw err;
  }
  return summary;
}

function asArgumentError(err: unknown): unknown {
  if (err instanceof PiefxisFormatError) return badArgument('file', `${err.message}; nothing was imported`);
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EISDIR' || code === 'ENOENT') return badArgument('file', `${(err as Error).message}; nothing was imported`);
  return err;
}
