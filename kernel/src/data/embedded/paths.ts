/**
 * The file arguments of the embedded-database commands: a relative path is relative to data_dir (as for
 * dump_config), a file read must be a readable regular file, and a file written must not be one the server
 * must not overwrite (its own database files and their journals, the fallback, /proc, /sys, /dev) nor a
 * directory. Files are written whole under a temporary name in the same directory, 0600, then renamed:
 * a failure leaves no half-written file behind, and the old one (if any) as it was.
 */
import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { badArgument, failed, notFound } from '@service/plugin-api';
import { fsReason } from '../fs-reason.js';
import { fallbackPath, storesOf } from './stores.js';

const SYSTEM_TREES = ['/proc', '/sys', '/dev'];

interface PathConfig {
  dataDir: string;
  sql: { type: string; database: string; server: string };
}

function absolute(argument: string, value: string, dataDir: string): string {
  if (!value) throw badArgument(argument, `argument '${argument}' must be a file path`);
  if (value.includes('\0')) throw badArgument(argument, `argument '${argument}' contains a NUL character`);
  return isAbsolute(value) ? resolve(value) : resolve(dataDir, value);
}

/** The path with its directory's symbolic links resolved (the file itself may not exist yet). */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

function inSystemTree(path: string): boolean {
  return SYSTEM_TREES.some((tree) => path === tree || path.startsWith(tree + sep));
}

/** The files the server's databases consist of (each SQLite file, its -wal, -shm and -journal), and the fallback. */
function protectedFiles(config: PathConfig): Set<string> {
  const out = new Set<string>();
  for (const store of storesOf(config, true).stores) {
    for (const suffix of ['', '-wal', '-shm', '-journal']) out.add(real(store.file + suffix));
  }
  out.add(real(fallbackPath(config.dataDir)));
  return out;
}

/** A file the command reads: exists, is a regular file. */
export async function inputFile(argument: string, value: string, config: PathConfig): Promise<string> {
  const path = absolute(argument, value, config.dataDir);
  if (inSystemTree(real(path))) throw badArgument(argument, `argument '${argument}': ${path} is not a backup or dump file (system tree)`);
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`argument '${argument}': file ${path} does not exist`);
    throw failed(`argument '${argument}': cannot read ${path}: ${fsReason(err)}`);
  }
  if (!info.isFile()) throw badArgument(argument, `argument '${argument}': ${path} is not a regular file`);
  if (protectedFiles(config).has(real(path))) throw badArgument(argument, `argument '${argument}': ${path} is one of the server's live database files, not a backup`);
  return path;
}

/** A file the command writes: its directory exists, it is not a directory, not a system file, not the server's own. */
export async function outputFile(argument: string, value: string, config: PathConfig): Promise<string> {
  const path = absolute(argument, value, config.dataDir);
  const resolved = real(path);
  if (inSystemTree(resolved)) throw badArgument(argument, `argument '${argument}': the server does not write under ${SYSTEM_TREES.join(', ')} (${path})`);
  if (protectedFiles(config).has(resolved)) throw badArgument(argument, `argument '${argument}': ${path} is one of the server's own database files; choose another file`);
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory()) throw badArgument(argument, `argument '${argument}': ${path} is a directory; give a file name`);
  if (existing && !existing.isFile()) throw badArgument(argument, `argument '${argument}': ${path} exists and is not a regular file`);
  const dir = await stat(dirname(path)).catch(() => undefined);
  if (!dir) throw badArgument(argument, `argument '${argument}': the directory ${dirname(path)} does not exist`);
  if (!dir.isDirectory()) throw badArgument(argument, `argument '${argument}': ${dirname(path)} is not a directory`);
  return path;
}

/** A temporary name next to `target` (same file system, so the final rename is atomic). */
export function temporaryNextTo(target: string): string {
  return join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
}

/** Moves a finished temporary file onto its target; on failure removes it and says why. */
export async function commitFile(temporary: string, target: string): Promise<void> {
  try {
    await rename(temporary, target);
  } catch (err) {
    await unlink(temporary).catch(() => undefined);
    throw failed(`cannot write ${target}: ${fsReason(err, true)}`);
  }
}
