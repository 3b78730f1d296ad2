/**
 * @service/plugin-api: the one contract between the server and its modules, built-in or third-party.
 *
 * - The module contract: `defineModule`, options, commands, registrations, hooks, service references.
 * - The services the server gives every module (`ctx.services`), as narrow typed interfaces.
 * - The values modules and the server exchange: XML elements, JIDs, stanza/stream/command errors, SASL.
 * - Helpers for a module's tables on every database the server runs on.
 *
 * It is versioned on its own (PLUGIN_API_VERSION); a module declares the range it was built for. At run time
 * a plugin's `import '@service/plugin-api'` resolves to the running server's copy, so there is one copy of
 * each class whatever the plugin was installed with.
 */
export const PLUGIN_API_VERSION = '0.1.0';

// The module contract
export { defineModule } from './module/definition.js';
export type {
  MiddlewareRegistration,
  ModuleContext,
  ModuleDefinition,
  ModuleDependency,
  ModuleInstance,
  OptionsOf,
  ScopeDecl,
  XmppRegistrations,
} from './module/definition.js';
export type { ListenerCommonConfig, ListenerKindDecl, ListenerStarter, OpenListener } from './module/listeners.js';
export { PortabilityError, type AccountPortability, type HostImportResult, type HostPortability, type PortableElementName } from './module/portability.js';
export { createServiceRef, provide, type ProvidedService, type ServiceDependency, type ServiceRef } from './module/service-ref.js';
export { HOOK_STOP, type HookHandler, type HookMap, type HookName, type HookRegistration, type HookResult, type HooksApi } from './module/hooks.js';
export type {
  AnyOption,
  BooleanOption,
  CustomOption,
  EnumOption,
  InferOption,
  InferOptions,
  InferValue,
  IntegerOption,
  ListOption,
  MapOption,
  ObjectOption,
  OptionPath,
  OptionSpec,
  OptionsSchema,
  StringOption,
} from './config/options.js';

// Commands
export { defineCommand, jsonForm } from './commands/types.js';
export type {
  ArgDecl,
  ArgInput,
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
  TypeOf,
  ValueType,
} from './commands/types.js';
export {
  CommandError,
  ERROR_KINDS,
  asCommandError,
  badArgument,
  conflict,
  failed,
  namingArgument,
  notFound,
  type ErrorKind,
  type ErrorKindInfo,
} from './commands/errors.js';

// The server's services
export type { DocumentationApi, ServerServices } from './services/index.js';
export type { AccountsApi, ScramCredential, ScramHash } from './services/accounts.js';
export type { HttpAuthApi, HttpCredentials, LoginOrigin, LoginWay, TokensApi } from './services/auth.js';
export type { AccessAction, AccessApi, AclSubject, CommandDoc, CommandsApi, ExecuteOptions, ServerConfigView, ServerControl } from './services/server.js';
export type { CompileResult, ModulesApi } from './services/modules.js';
export type { CachesApi } from './services/caches.js';
export { addressInRange, parseAddressRange, type AddressBan, type AddressBanSettings, type AddressRange, type LoginLimitsApi } from './services/logins.js';
export { ChannelError, type ChannelRegistration, type ChannelValue, type ProcessesApi } from './services/processes.js';
export type { NodeTransport, NodesApi } from './services/nodes.js';
export type { DiscoApi, FanOutCarrier, RouterApi, SessionDirectory, SessionSource, XmppApi } from './services/xmpp.js';
export type { LogFn, Logger } from './log/logger.js';

// HTTP
export type { HttpContext, HttpListenerInfo, HttpRequestHandler, HttpState } from './http/types.js';
export { readBodyText } from './http/body.js';
export type { HttpServeConfig, HttpServerApi } from './http/server.js';
export { sendCommandError, sendError, sendJson } from './http/respond.js';

// XML
export { XmlElement, escapeAttr, escapeText, serialize, x, type XmlNode } from './xml/element.js';
export {
  DEFAULT_LIMITS,
  ParseError,
  StreamParser,
  namespaceDeclarations,
  parseElement,
  type ParseErrorCondition,
  type StreamParserHandlers,
  type StreamParserLimits,
  type StreamParserOptions,
} from './xml/stream-parser.js';
export { fromStoredXml, toStoredXml } from './xml/stored.js';
export { FastSaxesParser } from './xml/saxes-parser.js';
export { elementOf, treeOf, type ElementTree } from './xml/element-tree.js';
export { closest, didYouMean, editDistance } from './util/did-you-mean.js';

// Addresses
export { Jid } from './jid/jid.js';
export {
  InvalidJid,
  MAX_DOMAIN_LENGTH,
  MAX_LABEL_LENGTH,
  MAX_RESOURCE_BYTES,
  MAX_USER_LENGTH,
  bareJid,
  formatJid,
  nameprep,
  nodeprep,
  parseJid,
  resourceprep,
  type Jid as ParsedJid,
  type JidPart,
} from './jid/prep.js';
export { MAPPED_TO_NOTHING, NON_ASCII_SPACE, bidiProblem, bidiViolation, codePoint, describeCharacter, prohibitedCharacter, type BidiViolation } from './jid/stringprep.js';
export { accountKey, hostKey, type AccountKey } from './accounts/account-key.js';

// XMPP
export { NS } from './xmpp/ns.js';
export {
  STANZA_CONDITIONS,
  StanzaError,
  StreamError,
  errorReply,
  type StanzaCondition,
  type StanzaErrorType,
  type StreamErrorCondition,
} from './xmpp/errors.js';
export type { C2SSession, ConnectionKind, SessionInfo, StanzaOutlet } from './xmpp/session.js';
export { Chain, type Middleware } from './xmpp/chain.js';
export type { DeliverContext, OfflineContext, ReceiveContext, SendContext, StreamControl, StreamInContext } from './xmpp/contexts.js';
export type { IqContext, IqHandler, IqHandlerRegistration, IqTarget } from './xmpp/iq.js';
export type { DiscoIdentity, DiscoRegistration, DiscoScope } from './xmpp/disco.js';
export type { FeatureContext, StreamFeatureRegistration } from './xmpp/features.js';
export type { DomainHandler, RemoteRoute, SessionKeeper } from './xmpp/routing.js';
export type { MovableValue, MovedSession, SessionMover, SessionStateCarrier } from './xmpp/moving.js';
export { RemoteSession, recordOf, type SessionPeers, type SessionRecord } from './xmpp/remote-session.js';
export { RemoteSessionTable, type SessionAnnouncement } from './xmpp/session-table.js';
export { SessionHandover, type HandoverPorts, type TakeMessage, type TakenMessage } from './xmpp/session-handover.js';
export {
  SaslFailure,
  type ChannelBindingType,
  type SaslCondition,
  type SaslConnection,
  type SaslExchange,
  type SaslMechanism,
  type SaslPeer,
  type SaslServices,
  type SaslStep,
  type SaslSuccess,
} from './xmpp/sasl.js';

// Storage
export { binaryCollation, deletePicked, isUniqueViolation, sqlClientOf, type DbKind, type Migration, type SqlClient, type SqlType } from './storage/sql.js';
export { insertRows } from './storage/insert-rows.js';
export { BatchWriter, type BatchWriterOptions } from './storage/batch-writer.js';
export { isDeadlock, retryingTransaction } from './storage/transaction.js';
export { pluck } from './storage/pluck.js';
export { preparedRead, type PreparedRead, type Placeholders } from './storage/prepared.js';
export type { Knex } from 'knex';

// Utilities
export { KeyedLock } from './util/keyed-lock.js';
export { randomHex, randomId } from './util/random-id.js';
export { JOBS_WORKER, onJobsHome } from './util/jobs-home.js';
export { PurgeJobs, purgeDays, type PurgeJobsSpec, type PurgeRequest } from './util/purge-jobs.js';
export { BatchJobs, batchStatusText, type BatchJobOptions, type BatchJobState, type BatchJobStatus } from './util/batch-jobs.js';
export { CALL_TIMEOUT_MS, PendingCalls, answerOf, unreachable, valueOf, type ChannelAnswer } from './util/pending-calls.js';

// Publishing: a registry's index and what a publisher signs.
export { REGISTRY_FORMAT, contentDigest, pluginSignaturePayload, type PackageFile, type RegistryIndex, type RegistryPlugin, type RegistryVersion, type SignedFacts } from './publishing/registry.js';
