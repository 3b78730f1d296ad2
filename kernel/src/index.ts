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
export { sendCommandError, sendError, sendJson } from './http/respond.js';
export { readBodyText } from './http/body.js';

export { createLogger, LOG_LEVELS, type Logger, type LogLevel } from './log/logger.js';
export type { Migration } from './storage/migrations.js';
export { binaryCollation, sqlClientOf } from './storage/migrations.js';
export type { Knex } from 'knex';
export type { DbKind, SqlType } from './storage/database.js';

// XMPP: what modules use to handle stanzas.
export { XmlElement, x, serialize, type XmlNode } from './xmpp/xml/element.js';
export { DEFAULT_LIMITS, parseElement, ParseError } from './xmpp/xml/stream-parser.js';
export { toStoredXml, fromStoredXml } from './xmpp/xml/stored.js';
export { KeyedLock } from './util/keyed-lock.js';
export { brand } from './util/brand.js';
export { Jid, InvalidJid } from './xmpp/jid.js';
export { presenceAccess, type PresenceAccess } from './xmpp/presence-access.js';
export { NS } from './xmpp/ns.js';
export { StanzaError, StreamError, errorReply, STANZA_CONDITIONS, type StanzaCondition, type StanzaErrorType, type StreamErrorCondition } from './xmpp/errors.js';
export { C2SSession, type ConnectionKind, type StanzaOutlet } from './xmpp/sm/session.js';
export type { SessionManager } from './xmpp/sm/session-manager.js';
export type { XmppService, SessionKeeper } from './xmpp/service.js';
export type { Router, DomainHandler } from './xmpp/routing/router.js';
export type { Middleware } from './xmpp/routing/chain.js';
export type { DeliverContext, OfflineContext, ReceiveContext, SendContext, StreamControl, StreamInContext } from './xmpp/routing/contexts.js';
export type { IqContext, IqHandler, IqHandlerRegistration, IqTarget } from './xmpp/routing/iq-handlers.js';
export type { DiscoIdentity, DiscoRegistration, DiscoScope } from './xmpp/disco.js';
export type { FeatureContext, StreamFeatureRegistration } from './xmpp/c2s/features.js';
export { SaslFailure, type ChannelBindingType, type SaslCondition, type SaslExchange, type SaslMechanism, type SaslPeer, type SaslServices, type SaslStep } from './xmpp/sasl/mechanism.js';
export type { MiddlewareRegistration, XmppRegistrations } from './modules/definition.js';
export { isUniqueViolation } from './storage/database.js';
export { pluck } from './storage/pluck.js';
export { insertRows } from './storage/insert-rows.js';
export { isDeadlock, retryingTransaction } from './storage/transaction.js';
export { nodeprep, nameprep, resourceprep } from './accounts/jid.js';
export { accountKey, hostKey, type AccountKey } from './accounts/account-key.js';
