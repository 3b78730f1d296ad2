/**
 * What `servicectl foreground` needs to run the server, as `@service/kernel/start`: the start itself and the
 * errors it reports. Lighter than the index: the primary of several workers serves no client and loads nothing
 * more (workers/primary-config.ts); the server's code is loaded where it runs, in each worker or in the one
 * process.
 */
export { startService, workerIdentity, type RunningService } from './workers/start.js';
export { WorkerStartError } from './workers/supervisor.js';
export { ConfigError } from './config/errors.js';
export { ModuleError } from './modules/errors.js';
