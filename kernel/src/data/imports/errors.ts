/**
 * The importers' input errors: a file or directory that is missing, unreadable or not in the expected format.
 * The commands turn them into a failed call with the message as it is (which names the file, and the line).
 */
import { readdir } from 'node:fs/promises';
import { fsReason } from '../fs-reason.js';

export class ImportInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImportInputError';
  }
}


/** A directory's entries, sorted; an error of the file system as an ImportInputError naming the directory. */
export async function listDir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (err) {
    throw new ImportInputError(`cannot read ${dir}: ${fsReason(err)}`);
  }
}
