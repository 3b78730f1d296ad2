/**
 * Module failures, each with its own code (after Fastify's plugin errors), so a failed boot names the
 * module and says exactly what is wrong.
 */

export type ModuleErrorCode =
  | 'MODULE_NOT_FOUND'
  | 'MODULE_INVALID'
  | 'MODULE_NAME_MISMATCH'
  | 'MODULE_API_MISMATCH'
  | 'MODULE_DEPENDENCY_MISSING'
  | 'MODULE_DEPENDENCY_VERSION'
  | 'MODULE_SERVICE_MISSING'
  | 'MODULE_SERVICE_CONFLICT'
  | 'MODULE_DEPENDENCY_CYCLE'
  | 'MODULE_HANDLERS_MISMATCH'
  | 'MODULE_REGISTRATION_FAILED'
  | 'MODULE_START_FAILED'
  | 'MODULE_STOP_FAILED';

export class ModuleError extends Error {
  constructor(
    readonly code: ModuleErrorCode,
    readonly module: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${code}: module ${module}: ${message}`, options);
    this.name = 'ModuleError';
  }
}
