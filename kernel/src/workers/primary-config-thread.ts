/**
 * The thread of primary-config.ts: reads and validates the configuration file as a start does, answers with the
 * primary's settings or with the error, and ends, taking the server's code with it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ConfigError } from '../config/errors.js';
import { ModuleError } from '../modules/errors.js';
import { Server } from '../server.js';
import type { PrimaryConfigAnswer } from './primary-config.js';

const { file } = workerData as { file: string };
let answer: PrimaryConfigAnswer;
try {
  const config = await Server.readConfig(file);
  const { workers, dataDir, loglevel, log_rotate_count, log_rotate_size, log_file } = config;
  answer = { settings: { workers, dataDir, loglevel, log_rotate_count, log_rotate_size, log_file } };
} catch (err) {
  if (err instanceof ConfigError) answer = { configError: { file: err.file, issues: err.issues } };
  else if (err instanceof ModuleError) answer = { moduleError: { code: err.code, module: err.module, message: err.message } };
  else answer = { error: { message: (err as Error).message, code: (err as NodeJS.ErrnoException).code } };
}
parentPort!.postMessage(answer);
