/**
 * The configuration as the primary of several workers reads it: validated in full, as every start does, but in
 * a thread that ends once it has answered. Validating loads the whole server (server.ts, and every module's
 * package through the module catalog), and the primary serves no client: kept, that code held 116 MB of its RSS
 * where its own work (the supervisor, the log) needs about 61; with the thread gone, 71 (docs/performance.md,
 * "A fourteenth VM"). A file that does not validate fails as it always has: the same ConfigError or ModuleError,
 * rebuilt from what the thread sent.
 */
import { Worker } from 'node:worker_threads';
import { ConfigError } from '../config/errors.js';
import type { Config } from '../config/load.js';
import { ModuleError } from '../modules/errors.js';

/** What the primary uses of the configuration: how many workers, where the data lives, and its log. */
export type PrimarySettings = Pick<Config, 'workers' | 'dataDir' | 'loglevel' | 'log_rotate_count' | 'log_rotate_size' | 'log_file'>;

/** What the thread answers (primary-config-thread.ts). */
export type PrimaryConfigAnswer =
  | { readonly settings: PrimarySettings }
  | { readonly configError: Pick<ConfigError, 'file' | 'issues'> }
  | { readonly moduleError: Pick<ModuleError, 'code' | 'module' | 'message'> }
  | { readonly error: { readonly message: string; readonly code?: string } };

export function readPrimarySettings(file: string): Promise<PrimarySettings> {
  return new Promise((resolve, reject) => {
    const thread = new Worker(new URL('./primary-config-thread.js', import.meta.url), { workerData: { file } });
    thread.once('message', (answer: PrimaryConfigAnswer) => {
      if ('settings' in answer) resolve(answer.settings);
      else reject(rebuilt(answer));
    });
    thread.once('error', reject);
    // The thread answers before it ends; ending without an answer is a crash of the thread itself.
    thread.once('exit', (code) => reject(new Error(`the configuration could not be read (its thread ended with status ${code})`)));
  });
}

function rebuilt(answer: Exclude<PrimaryConfigAnswer, { settings: PrimarySettings }>): Error {
  if ('configError' in answer) return new ConfigError(answer.configError.file, answer.configError.issues);
  if ('moduleError' in answer) {
    const { code, module, message } = answer.moduleError;
    // The message the thread's error carried, word for word (the constructor would prefix the code and module again).
    return Object.assign(new ModuleError(code, module, ''), { message });
  }
  return Object.assign(new Error(answer.error.message), answer.error.code === undefined ? {} : { code: answer.error.code });
}
