/**
 * `mnesia_change_nodename`: writes a copy of a backup with one node name replaced by another — in the
 * manifest and in the `nodes` table (kernel/src/node/identity.ts) of each image, merging with a record the
 * new name already has, as mnesia_change does on live data. The old backup is checked whole first and left
 * as it is; the new one is written 0600 under a temporary name and renamed into place.
 */
import { unlink } from 'node:fs/promises';
import Database from 'better-sqlite3';
import { badArgument, failed, notFound } from '@service/plugin-api';
import type { KernelServices } from '../../modules/services.js';
import { NODES_TABLE } from '../../node/identity.js';
import { extractContainer, writeContainer } from './container.js';
import { fsReason } from '../fs-reason.js';
import { commitFile, inputFile, outputFile, temporaryNextTo } from './paths.js';
import { inWorkDir, type Progress } from './snapshot.js';
import { quoteIdent, tablesOf } from './stores.js';
import { checkImageAside } from './verify.js';

interface NodeRow {
  name: string;
  first_started: number;
  last_started: number;
}

function renameIn(file: string, from: string, to: string): boolean {
  const db = new Database(file);
  try {
    if (!tablesOf(db).includes(NODES_TABLE)) return false;
    const t = quoteIdent(NODES_TABLE);
    return db.transaction(() => {
      const old = db.prepare(`SELECT name, first_started, last_started FROM ${t} WHERE name = ?`).get(from) as NodeRow | undefined;
      if (!old) return false;
      const current = db.prepare(`SELECT name, first_started, last_started FROM ${t} WHERE name = ?`).get(to) as NodeRow | undefined;
      db.prepare(`DELETE FROM ${t} WHERE name = ?`).run(from);
      if (current) {
        db.prepare(`UPDATE ${t} SET first_started = ?, last_started = ? WHERE name = ?`).run(
          Math.min(Number(old.first_started), Number(current.first_started)),
          Math.max(Number(old.last_started), Number(current.last_started)),
          to,
        );
      } else {
        db.prepare(`INSERT INTO ${t} (name, first_started, last_started) VALUES (?, ?, ?)`).run(to, old.first_started, old.last_started);
      }
      return true;
    })();
  } finally {
    db.close();
  }
}

function namesIn(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    if (!tablesOf(db).includes(NODES_TABLE)) return [];
    return (db.prepare(`SELECT name FROM ${quoteIdent(NODES_TABLE)} ORDER BY name`).all() as Array<{ name: string }>).map((r) => r.name);
  } finally {
    db.close();
  }
}

export async function changeNodename(
  services: KernelServices,
  args: { oldnodename: string; newnodename: string; oldbackup: string; newbackup: string },
  progress: Progress,
): Promise<string> {
  const { oldnodename: from, newnodename: to } = args;
  if (!from) throw badArgument('oldnodename', "argument 'oldnodename' must be a node name");
  if (!to) throw badArgument('newnodename', "argument 'newnodename' must be a node name");
  if (from === to) throw badArgument('newnodename', `argument 'newnodename' is the same as oldnodename (${from}): nothing to change`);
  const config = services.config();
  const source = await inputFile('oldbackup', args.oldbackup, config);
  const target = await outputFile('newbackup', args.newbackup, config);
  if (source === target) throw badArgument('newbackup', "argument 'newbackup' must differ from oldbackup (the old backup is kept as it is)");
  return inWorkDir(config.dataDir, async (dir) => {
    progress(0, undefined, 'checking the backup');
    const { manifest, images } = await extractContainer(source, dir);
    for (const image of images) await checkImageAside(image.file, source, image.store);
    let renamed = manifest.node === from;
    for (const image of images) if (renameIn(image.file, from, to)) renamed = true;
    if (!renamed) {
      const known = [...new Set([manifest.node, ...images.flatMap((i) => namesIn(i.file))])];
      throw notFound(`no node named '${from}' in ${source}; it names: ${known.join(', ')}`);
    }
    const counted = images.map((image) => {
      const db = new Database(image.file, { readonly: true });
      try {
        const tables = tablesOf(db);
        const rows = tables.reduce((n, t) => n + Number((db.prepare(`SELECT count(*) AS n FROM ${quoteIdent(t)}`).get() as { n: number }).n), 0);
        return { ...image, tables: tables.length, rows };
      } finally {
        db.close();
      }
    });
    progress(0, undefined, 'writing the new backup');
    const temporary = temporaryNextTo(target);
    try {
      await writeContainer(temporary, { format: manifest.format, version: manifest.version, created: manifest.created, server: manifest.server, node: manifest.node === from ? to : manifest.node }, counted);
    } catch (err) {
      await unlink(temporary).catch(() => undefined);
      throw failed(`cannot write ${target}: ${fsReason(err, true)}`);
    }
    await commitFile(temporary, target);
    services.logger.notice({ from, to, source, target }, 'backup %s rewritten for node %s as %s', source, to, target);
    return `Backup ${source} written as ${target} with node ${from} renamed ${to}`;
  });
}
