/**
 * `restore`: an immediate restore from a binary backup, while the server runs. The file is checked whole
 * first (verify.ts); then every covered store is replaced in one held transaction (replace.ts, copy-image.ts):
 * clients' queries wait meanwhile and then see the restored data; a failure before the commit changes
 * nothing. Sessions of accounts the backup has go on; the others are closed with a stream error.
 */
import type { KernelServices } from '../../modules/services.js';
import { describeParts } from './backup.js';
import { attachImage, copyAttachedImage, detachImage } from './copy-image.js';
import { inputFile } from './paths.js';
import { afterReplace, replaceInTransactions } from './replace.js';
import { inWorkDir, type Progress } from './snapshot.js';
import { verifyBackup } from './verify.js';

export async function restore(services: KernelServices, fileArg: string, progress: Progress): Promise<string> {
  const config = services.config();
  const file = await inputFile('file', fileArg, config);
  return inWorkDir(config.dataDir, async (dir) => {
    progress(0, undefined, 'checking the backup');
    const verified = await verifyBackup(services, file, dir);
    const label = 'rows restored';
    let done = 0;
    progress(0, verified.rows, label);
    const images = new Map(verified.images.map((i) => [i.store, i.file]));
    await replaceInTransactions(
      services,
      [...images.keys()],
      (db) =>
        copyAttachedImage(db, (rows) => {
          done += rows;
          progress(done, verified.rows, label);
        }),
      { before: (db, store) => attachImage(db, images.get(store)!), after: (db) => detachImage(db) },
    );
    const { kicked } = await afterReplace(services, 'a database restore');
    services.logger.notice({ file, parts: verified.manifest.parts.map((p) => p.store), rows: done, kicked }, 'database restored from %s', file);
    return `Restored ${describeParts(verified.manifest)} from ${file} (made ${verified.manifest.created} by node ${verified.manifest.node})${kicked ? `; ${kicked} session(s) of accounts the backup does not have were closed` : ''}`;
  });
}
