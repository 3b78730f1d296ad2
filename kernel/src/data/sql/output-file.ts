/**
 * The file export2sql writes, written in pieces as the rows are read: a relative path is relative to
 * data_dir, the file is created 0600 (it holds password keys) under a temporary name in the same directory
 * and renamed into place only when complete, so a failed export leaves no file and an existing file as it was.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { badArgument, failed } from '@service/plugin-api';
import { fsReason } from '../fs-reason.js';

export class OutputFile {
  private constructor(
    readonly target: string,
    private readonly temporary: string,
    private readonly handle: FileHandle,
  ) {}

  /** Resolves `path` (the command's `argument`) and creates the temporary file next to the target. */
  static async create(argument: string, path: string, dataDir: string): Promise<OutputFile> {
    if (!path) throw badArgument(argument, `argument '${argument}' must be a file path`);
    const target = isAbsolute(path) ? path : resolve(dataDir, path);
    if (path.endsWith('/')) throw badArgument(argument, `${target} is a directory: give a file name`);
    const temporary = join(dirname(target), `.${basename(target)}.${randomBytes(4).toString('hex')}.partial`);
    try {
      return new OutputFile(target, temporary, await open(temporary, 'wx', 0o600));
    } catch (err) {
      throw writeFailure(target, err);
    }
  }

  async write(text: string): Promise<void> {
    try {
      await this.handle.write(text);
    } catch (err) {
      throw writeFailure(this.target, err);
    }
  }

  /** Flushes, closes and moves the file into place. */
  async commit(): Promise<void> {
    try {
      await this.handle.sync();
      await this.handle.close();
      await rename(this.temporary, this.target);
    } catch (err) {
      await rm(this.temporary, { force: true });
      throw writeFailure(this.target, err);
    }
  }

  /** Removes the partial file; the target is untouched. */
  async discard(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await rm(this.temporary, { force: true });
  }
}

function writeFailure(target: string, err: unknown) {
  return failed(`cannot write ${target}: ${fsReason(err, true)}`);
}
