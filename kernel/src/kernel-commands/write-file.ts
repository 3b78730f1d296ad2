/**
 * Commands that write a file for the operator (dump_config, the documentation generators): a relative path
 * is relative to data_dir, the directory must exist (no recursive mkdir: Node's can spin forever on /proc),
 * and a failure says why in words.
 */
import { writeFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { badArgument, failed } from '@service/plugin-api';
import { fsReason } from '../data/fs-reason.js';

export async function writeOutputFile(argument: string, path: string, dataDir: string, text: string, mode?: number): Promise<void> {
  if (!path) throw badArgument(argument, `argument '${argument}' must be a file path`);
  const target = isAbsolute(path) ? path : resolve(dataDir, path);
  try {
    await writeFile(target, text, mode === undefined ? undefined : { mode });
  } catch (err) {
    throw failed(`cannot write ${target}: ${fsReason(err, true)}`);
  }
}
