/**
 * The kernel's public API, for modules, frontends and tests. A plugin may use only the types (the module
 * contract is plain data and functions); built-in modules also use the helpers.
 */
export { KERNEL_VERSION } from './version.js';
export { Server, type ServerOptions, BUILTIN_MODULES_DIR } from './server.js';
export { KERNEL_COMMANDS } from './kernel-commands/index.js';
export { parseArgv, synopsis, argumentForm, UsageError } from './ctl/argv.js';
export { CONTROL_SOCKET, type ControlFrame, type ControlRequest, type PongFrame } from './ctl/protocol.js';
export type { CommandDoc } from './docs/command-doc.js';
export { staticCommandDocs } from './docs/static-docs.js';
export { renderOverview, renderHelpTopic, renderCommandHelp } from './docs/help-text.js';
export { openApiDocument, docsAtVersion } from './docs/openapi.js';
export { formatCliOutput } from './ctl/output.js';
export { LogService } from './log/log-service.js';

export { defineModule } from './modules/definition.js';
export type { ModuleContext, ModuleDefinition, ModuleDependency, ModuleInstance, OptionsOf, ScopeDecl } from './modules/definition.js';
export type { KernelServices, ServerControl } from './modules/services.js';
export { ModuleError, type ModuleErrorCode } from './modules/errors.js';
export { ModuleCatalog } from './modules/catalog.js';

export { defineCommand } from './commands/types.js';
export type {
  ArgDecl,
  ArgsOf,
  CallContext,
  Caller,
  CommandDecl,
  CommandExample,
  CommandHandler,
  CommandPolicy,
  FieldDecl,
  HandlersFor,
  ListType,
  ObjectType,
  RegisteredCommand,
  ResultDecl,
  ResultOf,
  ResultType,
  ValueType,
} from './commands/types.js';
export { CommandError, ERROR_KINDS, asCommandError, badArgument, conflict, failed, notFound, type ErrorKind } from './commands/errors.js';
export type { CommandBus, ExecuteOptions } from './commands/bus.js';
export type { CommandRegistry } from './commands/registry.js';
export { describeType, type ArgInput } from './commands/coerce.js';
export { formatPath, closest } from './config/option-spec.js';

export type { InferOptions, OptionSpec, OptionsSchema } from './config/option-spec.js';
export { ConfigError } from './config/errors.js';
export { locateConfig, type ConfigLocation } from './config/locate.js';
export type { Config } from './config/load.js';

export { HOOK_STOP, type HookMap, type HookName, type HookRegistration } from './hooks/hooks.js';

export type { HttpContext, HttpRequestHandler, HttpState } from './http/types.js';
export { sendError, sendJson } from './http/respond.js';
export { readBodyText } from './http/body.js';

export { createLogger, LOG_LEVELS, type Logger, type LogLevel } from './log/logger.js';
export type { Migration } from './storage/migrations.js';
export type { DbKind, SqlType } from './storage/database.js';
