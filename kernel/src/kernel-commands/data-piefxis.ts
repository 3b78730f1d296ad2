/**
 * Kernel commands: XEP-0227 (PIEFXIS) export and import of accounts and their data (export_piefxis,
 * export_piefxis_host, import_piefxis). Declared here once; the work is kernel/src/data/piefxis/'s, the
 * data of each module comes through its portability contribution (plugin API `portability`).
 */
import { isAbsolute } from 'node:path';
import { badArgument, defineCommand, type HandlersFor } from '@service/plugin-api';
import { exportPiefxis } from '../data/piefxis/export.js';
import { importPiefxisFile } from '../data/piefxis/import-file.js';
import type { KernelServices } from '../modules/services.js';

const dir = { name: 'dir', type: 'string', desc: 'Absolute path of an existing directory the server can write to', example: '/var/lib/service/export' } as const;

const EXPORT_TEXT =
  'Each host gets a file `<stamp>_<host>.xml` (a whole `<server-data xmlns="urn:xmpp:pie:0">` document, mode 0600) and an index `<stamp>.xml` includes them with `<xi:include>`, as ejabberd lays them out; ' +
  'either can be given to import_piefxis. Each account is written with its password as stored (a `password` attribute, or `<scram-credentials>` keys) and the data of every running module that ' +
  'stores some: roster, vCard, private XML, offline messages, privacy lists, PEP nodes; then the persistent MUC rooms of each host. The files appear only when the whole export succeeded; progress is reported per account. ' +
  'Fails with 400 when `dir` is not an absolute path of a writable directory, with 422 when a module cannot export an account (nothing is written).';

export const piefxisCommands = [
  defineCommand({
    name: 'export_piefxis',
    tags: ['mnesia'],
    desc: 'Export data of all users in the server to PIEFXIS files (XEP-0227)',
    longdesc: `Exports every served host. ${EXPORT_TEXT}`,
    note: 'XEP-0227 files',
    args: [dir],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { dir: '/var/lib/service/export' }, result: 0 }],
  }),
  defineCommand({
    name: 'export_piefxis_host',
    tags: ['mnesia'],
    desc: 'Export data of users in a host to PIEFXIS files (XEP-0227)',
    longdesc: `Exports one host. ${EXPORT_TEXT} Fails with 400 when the host is not served here.`,
    args: [dir, { name: 'host', type: 'string', desc: 'Vhost to export', example: 'localhost' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { dir: '/var/lib/service/export', host: 'localhost' }, result: 0 }],
  }),
  defineCommand({
    name: 'import_piefxis',
    tags: ['mnesia'],
    desc: 'Import users data from a PIEFXIS file (XEP-0227)',
    longdesc:
      'Reads the file as a stream (and the files in the same directory an index includes with `<xi:include>`, as ejabberd\'s export writes them), twice: ' +
      'first everything is checked and nothing written — malformed XML, a host not served here, an invalid user name, a user twice, malformed credentials or data a module refuses ' +
      'fail with 400 naming the file and line, and nothing is imported. Then the accounts are created one at a time with their data, with progress per account. ' +
      'Passwords: a plain `password` is stored as `auth_password_format` says; `<scram-credentials>` keys are kept as they are (the account logs in with its old password). ' +
      'An account (or a MUC room) that exists here is left as it is (nothing merged, listed in the log). Each account is imported whole or not at all: when writing its data fails it is removed again, ' +
      'and the result is 1. Data no running module imports (its module is not enabled) is left out and listed in the log.',
    args: [{ name: 'file', type: 'string', desc: 'Absolute path of the XEP-0227 file', example: '/var/lib/service/export/20250101-120000.xml' }],
    result: { name: 'res', type: 'rescode', desc: '0 when every account of the file was imported or skipped, 1 when some failed (see the log)' },
    examples: [{ args: { file: '/var/lib/service/export/20250101-120000.xml' }, result: 0 }],
  }),
] as const;

export function piefxisHandlers(services: KernelServices): HandlersFor<typeof piefxisCommands> {
  const progress = (call: { progress(done: number, total?: number, label?: string): void }) => (done: number, total: number) => call.progress(done, total, 'accounts');
  return {
    export_piefxis: async ({ dir }, call) => {
      const hosts = [...services.config().hosts].map((h) => services.accounts.servedHost(h));
      const result = await exportPiefxis(services, dir, hosts, progress(call));
      call.log.info({ files: result.files, accounts: result.accounts }, 'exported %d accounts to %s', result.accounts, result.files[0]);
    },
    export_piefxis_host: async ({ dir, host }, call) => {
      const result = await exportPiefxis(services, dir, [services.accounts.servedHost(host)], progress(call));
      call.log.info({ files: result.files, accounts: result.accounts }, 'exported %d accounts of %s to %s', result.accounts, host, result.files[0]);
    },
    import_piefxis: async ({ file }, call) => {
      if (!isAbsolute(file)) throw badArgument('file', `'${file}' is not an absolute path`);
      const summary = await importPiefxisFile(services, file, progress(call));
      call.log.info(
        { file, hosts: summary.hosts, accounts: summary.accounts, failed: summary.failed, imported: summary.imported, skipped: summary.skipped },
        'imported %d accounts from %s (%d failed, %d items skipped)',
        summary.accounts,
        file,
        summary.failed,
        summary.skipped.length,
      );
      return summary.failed === 0;
    },
  };
}
