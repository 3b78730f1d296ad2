/**
 * `backup`: a consistent online binary backup of the covered SQLite databases (snapshot.ts) in one
 * container file (container.ts), written 0600 under a temporary name and renamed into place.
 */
import { unlink } from 'node:fs/promises';
import { failed } from '@service/plugin-api';
import type { KernelServices } from '../../modules/services.js';
import { KERNEL_VERSION } from '../../version.js';
import { writeContainer, type Manifest } from './container.js';
import { fsReason } from '../fs-reason.js';
import { commitFile, outputFile, temporaryNextTo } from './paths.js';
import { inWorkDir, snapshotStores, type Progress } from './snapshot.js';
import { liveStores } from './stores.js';

export function describeParts(manifest: Manifest): string {
  return manifest.parts.map((p) => `${p.store} (${p.tables} tables, ${p.rows} rows)`).join(', ');
}

export async function backup(services: KernelServices, fileArg: string, progress: Progress): Promise<string> {
  const config = services.config();
  const target = await outputFile('file', fileArg, config);
  const { stores, excluded } = liveStores(services);
  if (!stores.length) throw failed(`there is no SQLite database to back up: ${excluded ?? 'the embedded store is empty'}`);
  const manifest = await inWorkDir(config.dataDir, async (dir) => {
    const images = await snapshotStores(services, dir, progress);
    const temporary = temporaryNextTo(target);
    let written: Manifest;
    try {
      written = await writeContainer(temporary, { format: 'service-db-backup', version: 1, created: new Date().toISOString(), server: KERNEL_VERSION, node: config.node_name }, images);
    } catch (err) {
      await unlink(temporary).catch(() => undefined);
      throw failed(`cannot write ${target}: ${fsReason(err, true)}`);
    }
    await commitFile(temporary, target);
    return written;
  });
  const bytes = manifest.parts.reduce((n, p) => n + p.bytes, 0);
  services.logger.notice({ file: target, parts: manifest.parts.map((p) => p.store), bytes }, 'database backup written to %s', target);
  return `Backup of ${describeParts(manifest)} written to ${target}${excluded ? `; ${excluded}` : ''}`;
}
