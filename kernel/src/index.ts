/**
 * The kernel's public API, for the command line (servicectl, which loads it only to run the server, a command
 * offline or its help; its other calls need only ./cli.ts), the test suite and tools. Modules do not import
 * it: they build on @service/plugin-api alone, which this re-exports so that one import serves the tools.
 */
export * from '@service/plugin-api';

export { KERNEL_VERSION } from './version.js';
export { Server, type ServerOptions, BUILTIN_MODULES_DIR } from './server.js';
export { startService, workerIdentity, type RunningService } from './workers/start.js';
export { WorkerStartError } from './workers/supervisor.js';
export { KERNEL_COMMANDS } from './kernel-commands/index.js';
export { parseArgv, synopsis, argumentForm, UsageError } from './ctl/argv.js';
export { CONTROL_SOCKET, type ControlFrame, type ControlRequest, type PongFrame } from './ctl/protocol.js';
export { staticCommandDocs } from './docs/static-docs.js';
export { renderOverview, renderHelpTopic, renderCommandHelp } from './docs/help-text.js';
export { openApiDocument, docsAtVersion } from './docs/openapi.js';
export { formatCliOutput } from './ctl/output.js';
export { LogService } from './log/log-service.js';

export type { KernelServices } from './modules/services.js';
export { ModuleError, type ModuleErrorCode } from './modules/errors.js';
export { ModuleCatalog } from './modules/catalog.js';

export type { CommandBus } from './commands/bus.js';
export type { CommandRegistry } from './commands/registry.js';
export { describeType } from './commands/coerce.js';
export { formatPath, closest } from './config/option-spec.js';

export { ConfigError } from './config/errors.js';
export { locateConfig, type ConfigLocation } from './config/locate.js';
export type { Config } from './config/load.js';


export { createLogger, LOG_LEVELS, type Logger, type LogLevel } from './log/logger.js';

export { Session } from './xmpp/sm/session.js';
export type { SessionManager } from './xmpp/sm/session-manager.js';
export type { XmppService } from './xmpp/service.js';
export type { Router } from './xmpp/routing/router.js';
