/**
 * `install_fallback` and its other half at boot. The command checks the backup as restore would, then
 * copies it to data_dir/fallback.bak (0600). The next start, before the storage opens (server.ts calls
 * applyInstalledFallback), checks it again (container and integrity), moves each image over its database
 * file (removing the old -wal and -shm) and renames the fallback to fallback-applied-<time>.bak; the start's
 * migrations then bring it up to date. A fallback that fails its check is renamed fallback-rejected-<time>.bak
 * and the server starts on the data it had. Under workers, worker 1 restores it when the server starts (the
 * others are forked after it); a worker started again while others run leaves it for the next start.
 */
import { chmod, copyFile, mkdtemp, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { failed } from '@service/plugin-api';
import type { Logger } from '../../log/logger.js';
import type { KernelServices } from '../../modules/services.js';
import { describeParts } from './backup.js';
import { extractContainer } from './container.js';
import { fsReason } from '../fs-reason.js';
import { commitFile, inputFile, temporaryNextTo } from './paths.js';
import { inWorkDir, type Progress } from './snapshot.js';
import { fallbackPath, storesOf } from './stores.js';
import { checkImage, verifyBackup } from './verify.js';

export async function installFallback(services: KernelServices, fileArg: string, progress: Progress): Promise<string> {
  const config = services.config();
  const file = await inputFile('file', fileArg, config);
  progress(0, undefined, 'checking the backup');
  const verified = await inWorkDir(config.dataDir, (dir) => verifyBackup(services, file, dir));
  const target = fallbackPath(config.dataDir);
  const temporary = temporaryNextTo(target);
  try {
    await copyFile(file, temporary);
    await chmod(temporary, 0o600);
  } catch (err) {
    await unlink(temporary).catch(() => undefined);
    throw failed(`cannot write ${target}: ${fsReason(err, true)}`);
  }
  await commitFile(temporary, target);
  services.logger.notice({ file, fallback: target }, 'fallback installed from %s: it is restored at the next start', file);
  const when = services.server.worker.count > 1 ? 'the next start of the server (servicectl stop, then start)' : 'the next start (servicectl restart)';
  return `Fallback installed from ${file} (${describeParts(verified.manifest)}): it is restored at ${when}`;
}

type BootConfig = Parameters<typeof storesOf>[0];

/** At boot, before the storage opens: restores an installed fallback, if any; `othersRun`: other workers hold the files open. */
export async function applyInstalledFallback(config: BootConfig, logger: Logger, othersRun: boolean): Promise<void> {
  const fallback = fallbackPath(config.dataDir);
  if (!(await stat(fallback).catch(() => undefined))) return;
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  if (othersRun) {
    logger.warn({ fallback }, 'a fallback is installed at %s: other workers hold the database open, so it is restored at the next start of the server', fallback);
    return;
  }
  const work = await mkdtemp(join(config.dataDir, '.embedded-work-'));
  try {
    let images;
    let manifest;
    try {
      ({ manifest, images } = await extractContainer(fallback, work));
      for (const image of images) checkImage(image.file, fallback, image.store);
    } catch (err) {
      const rejected = join(config.dataDir, `fallback-rejected-${stamp}.bak`);
      await rename(fallback, rejected);
      logger.error({ fallback: rejected, err: (err as Error).message }, 'the installed fallback is not usable and was not restored (kept as %s): %s', rejected, (err as Error).message);
      return;
    }
    const { stores } = storesOf(config, true);
    for (const image of images) {
      const store = stores.find((s) => s.name === image.store);
      if (!store) {
        logger.error({ store: image.store }, 'the installed fallback holds a %s database this configuration has no SQLite file for: that part is skipped', image.store);
        continue;
      }
      for (const suffix of ['-wal', '-shm', '-journal']) await unlink(store.file + suffix).catch(() => undefined);
      await rename(image.file, store.file);
    }
    const applied = join(config.dataDir, `fallback-applied-${stamp}.bak`);
    await rename(fallback, applied);
    logger.notice({ fallback: applied, parts: manifest.parts.map((p) => p.store), created: manifest.created }, 'fallback restored at start (%s, made %s); kept as %s', describeParts(manifest), manifest.created, applied);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
