/**
 * The XEP-0227 export: for each host a file `<stamp>_<host>.xml` (a whole `<server-data>` document of that
 * host, importable alone) and an index `<stamp>.xml` that includes them (`<xi:include>`), as ejabberd's
 * export_piefxis lays them out. Each account is written with its password (plain or SCRAM keys, as stored)
 * and what every running module exports for it, one account at a time, then the host-level data of the
 * modules that have some (MUC rooms). The files appear only when the whole export succeeded.
 */
import { access, constants, stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { badArgument, failed } from '@service/plugin-api';
import type { KernelServices } from '../../modules/services.js';
import { exportCredentials } from './credentials.js';
import { PiefxisWriter } from './writer.js';

export interface ExportResult {
  /** The index file, then one file per host. */
  readonly files: string[];
  readonly accounts: number;
}

/** An existing, writable directory given as an absolute path; a bad_argument naming `dir` otherwise. */
export async function checkDirectory(dir: string): Promise<void> {
  if (!isAbsolute(dir)) throw badArgument('dir', `'${dir}' is not an absolute path`);
  let info;
  try {
    info = await stat(dir);
  } catch {
    throw badArgument('dir', `no such directory: ${dir}`);
  }
  if (!info.isDirectory()) throw badArgument('dir', `${dir} is not a directory`);
  try {
    await access(dir, constants.W_OK);
  } catch {
    throw badArgument('dir', `the directory ${dir} is not writable by the server`);
  }
}

function stampOf(date: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getUTCFullYear()}${p(date.getUTCMonth() + 1)}${p(date.getUTCDate())}-${p(date.getUTCHours())}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}`;
}

/** Writes the hosts' accounts to `dir` (hosts already normalized and served); `progress` hears each account. */
export async function exportPiefxis(services: KernelServices, dir: string, hosts: readonly string[], progress?: (done: number, total: number) => void): Promise<ExportResult> {
  await checkDirectory(dir);
  const stamp = stampOf(new Date());
  // Two exports in the same second get different names.
  let base = stamp;
  for (let n = 2; await exists(join(dir, `${base}.xml`)); n++) base = `${stamp}-${n}`;
  const hostFile = (host: string) => `${base}_${host.replace(/[^A-Za-z0-9-]/g, '_')}.xml`;

  let total = 0;
  for (const host of hosts) total += await services.accounts.countUsers(host);
  const writers: PiefxisWriter[] = [];
  let done = 0;
  let accounts = 0;
  try {
    const index = await PiefxisWriter.create(join(dir, `${base}.xml`));
    writers.push(index);
    await index.openServerData();
    for (const host of hosts) {
      const writer = await PiefxisWriter.create(join(dir, hostFile(host)));
      writers.push(writer);
      await index.include(hostFile(host));
      await writer.openServerData();
      await writer.openHost(host);
      const contributions = services.portability.forHost(host);
      for (const user of await services.accounts.listUsers(host)) {
        const { password, elements } = await exportCredentials(services, user, host);
        for (const { owner, contribution } of contributions) {
          try {
            elements.push(...(await contribution.exportAccount(user, host)));
          } catch (err) {
            throw failed(`${owner} could not export the data (${contribution.kind}) of ${user}@${host}: ${(err as Error).message}; no file was written`);
          }
        }
        await writer.user(user, password, elements);
        accounts++;
        progress?.(++done, total);
      }
      for (const { owner, contribution } of services.portability.hostLevel(host)) {
        let elements;
        try {
          elements = await contribution.exportHost(host);
        } catch (err) {
          throw failed(`${owner} could not export the data (${contribution.kind}) of ${host}: ${(err as Error).message}; no file was written`);
        }
        for (const element of elements) await writer.hostElement(element);
      }
      await writer.closeHost();
      await writer.closeServerData();
    }
    await index.closeServerData();
    // Host files first: the index never names a file that is not there.
    for (const writer of [...writers.slice(1), writers[0]!]) await writer.commit();
  } catch (err) {
    await Promise.all(writers.map((w) => w.discard()));
    throw err;
  }
  return { files: writers.map((w) => w.path), accounts };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
