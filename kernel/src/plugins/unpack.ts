/**
 * Unpacks a plugin tarball (npm-pack layout: every file under `package/`) into a directory. Only regular
 * files and directories are written: links, devices and paths that leave the directory are refused, so a
 * tarball cannot write outside its version directory. Sizes are bounded (a tar bomb is refused, not filled).
 */
import { mkdir } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** The most an unpacked plugin may weigh. */
const MAX_UNPACKED_BYTES = 200 * 1024 * 1024;
const MAX_ENTRIES = 20_000;

export class UnpackError extends Error {}

export async function unpackTarball(name: string, bytes: Buffer, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  let total = 0;
  let entries = 0;
  let refused: string | undefined;
  // Loaded when a plugin is installed, not by every server that never installs one.
  const tar = await import('tar');
  const extract = tar.x({
    cwd: dir,
    strip: 1,
    strict: true,
    preservePaths: false,
    preserveOwner: false,
    noMtime: false,
    filter: (path, entry) => {
      const type = 'type' in entry ? entry.type : 'File';
      const size = 'size' in entry ? entry.size : 0;
      entries += 1;
      total += size ?? 0;
      if (!path.startsWith('package/')) refused ??= `${path} is not under package/`;
      else if (type !== 'File' && type !== 'Directory' && type !== 'OldFile' && type !== 'ContiguousFile') refused ??= `${path} is a ${type}, and only files and directories are allowed`;
      else if (path.split('/').includes('..')) refused ??= `${path} leaves the package`;
      else if (total > MAX_UNPACKED_BYTES) refused ??= `it unpacks to more than ${MAX_UNPACKED_BYTES} bytes`;
      else if (entries > MAX_ENTRIES) refused ??= `it holds more than ${MAX_ENTRIES} entries`;
      return refused === undefined;
    },
  });
  try {
    await pipeline(Readable.from([bytes]), extract);
  } catch (err) {
    throw new UnpackError(`${name}: the tarball cannot be unpacked: ${(err as Error).message}`);
  }
  if (refused) throw new UnpackError(`${name}: the tarball is refused: ${refused}`);
}
