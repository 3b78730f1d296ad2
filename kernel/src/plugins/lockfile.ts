/**
 * The lockfile of installed plugins, `<data_dir>/plugins/lock.json`: which version of each plugin is
 * installed, from where, with which integrity. It is the only thing that says a plugin is installed: the
 * catalog reads the version directory it pins (`<data_dir>/plugins/<name>/<version>/`, never changed after
 * install), and the server starts what it lists. Written atomically (temporary file, then rename), so a
 * crash leaves the old lock or the new one, never half of one.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const LOCKFILE = 'lock.json';
const LOCK_FORMAT = 1;

export interface LockedPlugin {
  readonly version: string;
  /** `sha512-…` of the tarball it was installed from. */
  readonly integrity: string;
  /** The registry source it came from, as configured. */
  readonly source: string;
  readonly publisher: string;
  readonly summary: string;
  /** ISO time of the install or upgrade. */
  readonly installed: string;
}

export type PluginLock = Readonly<Record<string, LockedPlugin>>;

export async function readLock(pluginDir: string): Promise<PluginLock> {
  let text: string;
  try {
    text = await readFile(join(pluginDir, LOCKFILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  const parsed = JSON.parse(text) as { lockfileVersion?: number; plugins?: PluginLock };
  if (parsed.lockfileVersion !== LOCK_FORMAT || typeof parsed.plugins !== 'object' || parsed.plugins === null) {
    throw new Error(`${join(pluginDir, LOCKFILE)} is not a plugin lockfile of format ${LOCK_FORMAT}`);
  }
  return parsed.plugins;
}

export async function writeLock(pluginDir: string, plugins: PluginLock): Promise<void> {
  await mkdir(pluginDir, { recursive: true });
  const sorted = Object.fromEntries(Object.entries(plugins).sort(([a], [b]) => a.localeCompare(b)));
  const file = join(pluginDir, LOCKFILE);
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify({ lockfileVersion: LOCK_FORMAT, plugins: sorted }, null, 2)}\n`, { mode: 0o644 });
  await rename(temporary, file);
}

/** Where a locked version lives. */
export function versionDir(pluginDir: string, name: string, version: string): string {
  return join(pluginDir, name, version);
}
