/**
 * A file system error in words, for the commands that read or write the operator's files (dump_config, the
 * documentation generators, backups, dumps, exports, imports): the code and what it means, "ENOENT (no such
 * file or directory)", so that a failed call says why without a stack trace.
 */

const REASONS: Readonly<Record<string, string>> = {
  ENOTDIR: 'a part of the path is not a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  ELOOP: 'too many symbolic links',
};

/** `writing`: the error came from creating a file, where ENOENT means its directory is missing. */
export function fsReason(err: unknown, writing = false): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (!code) return (err as Error).message;
  const words = code === 'ENOENT' ? (writing ? 'the directory does not exist' : 'no such file or directory') : REASONS[code];
  return words ? `${code} (${words})` : code;
}
