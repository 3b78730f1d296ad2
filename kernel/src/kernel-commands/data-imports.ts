/**
 * Kernel commands: imports from other servers (Prosody's data directory, jabberd 1.4 spool files) and
 * convert_to_yaml (ejabberd.cfg → this server's YAML). Declared here once. The importers convert the other
 * server's files to an XEP-0227 document first (data/imports/), so that a file that cannot be read or parsed
 * fails the call before anything is written; the document then goes through the XEP-0227 import
 * (data/piefxis/import.ts), which owns every write to the modules' data.
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { badArgument, defineCommand, failed, type CallContext, type HandlersFor } from '@service/plugin-api';
import type { KernelServices } from '../modules/services.js';
import { importPiefxisDocument, type ImportSummary } from '../data/piefxis/import.js';
import { convertProsodyDir } from '../data/imports/prosody.js';
import { convertSpoolDir, convertSpoolFile } from '../data/imports/jabberd14.js';
import type { Conversion } from '../data/imports/pie.js';
import { fsReason } from '../data/fs-reason.js';
import { ImportInputError } from '../data/imports/errors.js';
import { FileSyntaxError } from '../data/syntax-error.js';
import { convertEjabberdCfg } from '../data/convert/ejabberd-cfg.js';
import { ErlangSyntaxError } from '../data/convert/erlang-terms.js';
import { writeOutputFile } from './write-file.js';

export const importsCommands = [
  defineCommand({
    name: 'import_prosody',
    tags: ['mnesia', 'sql'],
    desc: 'Import data from a Prosody server',
    longdesc:
      "Reads a Prosody 0.12 data directory (file storage, Prosody's `data_path`: one directory per host, its dots written `%2e`) and imports, for every host served here, " +
      'the accounts (plaintext passwords, or SCRAM-SHA-1/256 keys, so that users log in with their old passwords), rosters with pending subscription requests, vCards, private XML storage, offline messages and PEP nodes with their items. ' +
      'A relative path is relative to data_dir. Every file is read and converted before anything is written: a missing directory or a file that does not parse fails the call (with its file and line) and changes nothing. ' +
      "Stores that are not imported (MAM archives, MUC, …) are named in the log. Progress shows in servicectl. The spec's `import_otherserver`, with Prosody's name in it.",
    args: [{ name: 'dir', type: 'string', desc: "Prosody's data directory (data_path)", example: '/var/lib/prosody' }],
    result: { name: 'res', type: 'rescode', desc: '0 when every account was imported or skipped, 1 when some failed while being written (each removed again; see the log)' },
    examples: [{ args: { dir: '/var/lib/prosody' }, result: 0 }],
  }),
  defineCommand({
    name: 'import_file',
    tags: ['mnesia'],
    desc: 'Import user data from jabberd14 spool file',
    longdesc:
      "Imports one jabberd 1.4 spool file, `<host>/<user>.xml` (xdb_file): the user is the file's name and the host its directory's, as in ejabberd's jd2ejd. " +
      'Imports the plaintext password, the roster, the vCard, offline messages and private XML; last activity and hashed passwords are not imported (named in the result). ' +
      'A relative path is relative to data_dir. A file that is missing or not well-formed fails the call and changes nothing.',
    args: [{ name: 'file', type: 'string', desc: 'Full path to the jabberd14 spool file', example: '/var/spool/jabber/example.org/juliet.xml' }],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { file: '/var/spool/jabber/example.org/juliet.xml' }, result: 'Imported 1 account(s) from /var/spool/jabber/example.org/juliet.xml' }],
  }),
  defineCommand({
    name: 'import_dir',
    tags: ['mnesia'],
    desc: 'Import users data from jabberd14 spool dir',
    longdesc:
      "Imports every `<user>.xml` of a jabberd 1.4 host spool directory (the host is the directory's name), or of every host directory of a spool root, as import_file does for one. " +
      'Every file is read before anything is written: one that is not well-formed fails the call, names the file, and changes nothing. Progress shows in servicectl.',
    args: [{ name: 'file', type: 'string', desc: 'Full path to the jabberd14 spool directory', example: '/var/spool/jabber/example.org' }],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { file: '/var/spool/jabber/example.org' }, result: 'Imported 42 account(s) from /var/spool/jabber/example.org' }],
  }),
  defineCommand({
    name: 'convert_to_yaml',
    tags: ['config'],
    desc: 'Convert the input file from Erlang to YAML format',
    longdesc:
      "Converts an ejabberd legacy configuration (ejabberd.cfg, Erlang terms, ejabberd 2.x) to this server's YAML: hosts, loglevel, the c2s, http and xmlrpc listeners, ACLs, access rules, " +
      'auth_method, the SQL server (odbc_server) and the modules this server has with the options they accept. Every option it cannot map is listed with its line in a comment block at the top of the output and in the log. ' +
      'Relative paths are relative to data_dir; the output may not be the input or the running configuration file. A syntax error fails the call with its line and writes nothing.',
    args: [
      { name: 'in', type: 'string', desc: 'Full path to the original configuration file', example: '/etc/ejabberd/ejabberd.cfg' },
      { name: 'out', type: 'string', desc: 'And full path to the converted file', example: '/tmp/service.yml' },
    ],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { in: '/etc/ejabberd/ejabberd.cfg', out: '/tmp/service.yml' }, result: 0 }],
  }),
] as const;

/** An input error of the importers, as a failed call (nothing was written). */
function inputFailure(err: unknown): never {
  if (err instanceof ImportInputError || err instanceof FileSyntaxError) throw failed(`${err.message}; nothing was imported`);
  throw err;
}

/** How many items of a list the result names; the log has them all. */
const LISTED = 20;

function listed(items: readonly string[]): string {
  return items.length <= LISTED ? items.join('; ') : `${items.slice(0, LISTED).join('; ')}; and ${items.length - LISTED} more (see the log)`;
}

/** The result's text: what was imported from where, what the import skipped, what the conversion left out. */
function describeImport(summary: ImportSummary, from: string, notes: readonly string[]): string {
  const kinds = Object.entries(summary.imported)
    .map(([kind, n]) => `${n} ${kind}`)
    .join(', ');
  const skipped = summary.skipped.map((s) => `${s.user ? `${s.user}@` : ''}${s.host} ${s.what}: ${s.reason}`);
  return (
    `Imported ${summary.accounts} account(s) on ${summary.hosts} host(s)${kinds ? ` (${kinds})` : ''} from ${from}` +
    (summary.failed ? `; ${summary.failed} account(s) failed and were removed again` : '') +
    (skipped.length ? `; skipped: ${listed(skipped)}` : '') +
    (notes.length ? `; not imported: ${listed(notes)}` : '')
  );
}

export function importsHandlers(services: KernelServices): HandlersFor<typeof importsCommands> {
  const pathOf = (argument: string, path: string) => {
    if (!path) throw badArgument(argument, `argument '${argument}' must be a path`);
    return isAbsolute(path) ? path : resolve(services.config().dataDir, path);
  };

  /** Converted first (every file read), imported second; both report progress, and the log says what was left out. */
  const runImport = async (what: string, convert: (progress: (done: number, total: number, label: string) => void) => Promise<Conversion>, call: CallContext) => {
    let conversion: Conversion;
    try {
      conversion = await convert((done, total) => call.progress(done, total, 'files read'));
    } catch (err) {
      inputFailure(err);
    }
    if (!conversion.users) throw failed(`${what} holds no accounts; nothing was imported`);
    // Hosts this server does not serve are left out (and said so): the rest is imported.
    const served = new Set(services.config().hosts.map((h) => h.toLowerCase()));
    const hosts = conversion.document.getChildren('host');
    const kept = hosts.filter((h) => served.has((h.attrs.jid ?? '').toLowerCase()));
    if (!kept.length) {
      throw failed(`${what} has data for ${hosts.map((h) => h.attrs.jid).join(', ')}, none of which this server serves (hosts: ${[...served].join(', ')}); nothing was imported`);
    }
    for (const host of hosts) {
      if (!kept.includes(host)) conversion.notes.push({ file: what, reason: `host ${host.attrs.jid} is not served here (${host.getChildren('user').length} account(s) left out)` });
    }
    conversion.document.children = kept;
    for (const note of conversion.notes) call.log.warn({ file: note.file }, 'not imported: %s (%s)', note.reason, note.file);
    const summary = await importPiefxisDocument(services, conversion.document, (done, total) => call.progress(done, total, 'accounts imported'));
    for (const skipped of summary.skipped) {
      call.log.warn({ host: skipped.host, user: skipped.user, what: skipped.what }, 'not imported: %s%s: %s', skipped.user ? `${skipped.user}@` : '', skipped.host, skipped.reason);
    }
    const text = describeImport(summary, what, conversion.notes.map((n) => n.reason));
    call.log.notice({ from: what, accounts: summary.accounts, failed: summary.failed, imported: summary.imported, skipped: summary.skipped.length }, '%s', text);
    return { text, ok: summary.failed === 0 };
  };

  return {
    import_prosody: async ({ dir }, call) => {
      const path = pathOf('dir', dir);
      return (await runImport(path, (progress) => convertProsodyDir(path, progress), call)).ok;
    },
    import_file: async ({ file }, call) => {
      const path = pathOf('file', file);
      return (await runImport(path, () => convertSpoolFile(path), call)).text;
    },
    import_dir: async ({ file }, call) => {
      const path = pathOf('file', file);
      return (await runImport(path, (progress) => convertSpoolDir(path, progress), call)).text;
    },
    convert_to_yaml: async ({ in: input, out }, call) => {
      const from = pathOf('in', input);
      const to = pathOf('out', out);
      if (to === from) throw badArgument('out', 'the output file must not be the input file');
      if (to === services.config().file) throw badArgument('out', 'the output file must not be the running configuration file');
      let source: string;
      try {
        source = await readFile(from, 'utf8');
      } catch (err) {
        throw failed(`cannot read ${from}: ${fsReason(err)}`);
      }
      let converted;
      try {
        converted = await convertEjabberdCfg(source, from, services.catalog);
      } catch (err) {
        if (err instanceof ErlangSyntaxError) throw failed(`${err.message}; nothing was written`);
        throw err;
      }
      await writeOutputFile('out', to, services.config().dataDir, converted.yaml, 0o600);
      for (const u of converted.unmapped) call.log.warn({ line: u.line, option: u.option }, 'convert_to_yaml: not converted: %s%s (%s)', u.line ? `line ${u.line}: ` : '', u.option, u.reason);
      call.log.notice({ in: from, out: to, unmapped: converted.unmapped.length }, 'converted %s to %s; %d option(s) not converted (listed at the top of the output)', from, to, converted.unmapped.length);
    },
  };
}
