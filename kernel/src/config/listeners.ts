/**
 * Listener declarations (`listen:`), after ejabberd's: each entry names a port, an address and the
 * listener module, plus that module's options. Each module has its own closed set of options.
 */
import { OptionIssues, didYouMean, isPlainObject, validateOption, type InferOptions, type OptionPath, type OptionsSchema } from './option-spec.js';
import { type CustomOption } from '@service/plugin-api';

export const LISTENER_MODULES = ['service_c2s', 'service_http', 'service_xmlrpc'] as const;
export type ListenerModule = (typeof LISTENER_MODULES)[number];

const COMMON = {
  port: { type: 'integer', min: 0, max: 65535, required: true, doc: 'TCP port; 0 picks a free one (useful in tests).' },
  ip: { type: 'string', default: '::', doc: "Address to listen on; '::' means every IPv6 and IPv4 address." },
  module: { type: 'enum', values: LISTENER_MODULES, required: true, doc: 'What the listener serves.' },
  tag: { type: 'string', doc: 'A label for api_permissions `from: [{tag: …}]`.' },
  tls: { type: 'boolean', default: false, doc: 'Direct TLS on this port.' },
  certfile: { type: 'string', doc: 'PEM certificate and key for this listener; defaults to certfiles.' },
} as const satisfies OptionsSchema;

/** A client that trickles its request (slow loris) holds a connection only this long. */
const REQUEST_TIMEOUT = {
  type: 'integer',
  min: 1,
  max: 3600,
  default: 30,
  doc: 'Seconds a client has to send a whole request, headers and body; then the connection is closed with 408.',
} as const;

const HTTP = {
  ...COMMON,
  request_handlers: {
    type: 'map',
    values: { type: 'string', nonEmpty: true, doc: '' },
    keyPattern: /^\/[^\s?#]*$/,
    keyDoc: 'a URL path starting with /',
    default: {},
    doc: 'URL path prefix → handler, e.g. /api: mod_http_api, /oauth: service_oauth.',
  },
  max_body_size: { type: 'integer', min: 1, default: 1048576, doc: 'Largest accepted request body, in bytes (413 beyond).' },
  request_timeout: REQUEST_TIMEOUT,
  custom_headers: { type: 'map', values: { type: 'string', doc: '' }, default: {}, doc: 'Headers added to every response.' },
} as const satisfies OptionsSchema;

const C2S = {
  ...COMMON,
  starttls: { type: 'boolean', default: true, doc: 'Offer STARTTLS.' },
  starttls_required: { type: 'boolean', default: true, doc: 'Refuse authentication before STARTTLS.' },
  max_stanza_size: { type: 'integer', min: 1024, infinity: true, default: 262144, doc: 'Largest stanza in bytes; beyond it the stream is closed with policy-violation.' },
  access: { type: 'string', default: 'all', doc: 'Access rule deciding who may log in through this listener.' },
  negotiation_timeout: {
    type: 'integer',
    min: 1,
    max: 3600,
    default: 30,
    doc: 'Seconds a new connection has to open its stream, authenticate and bind a resource before it is closed (connection-timeout).',
  },
} as const satisfies OptionsSchema;

const XMLRPC = {
  ...COMMON,
  max_body_size: { type: 'integer', min: 1, default: 1048576, doc: 'Largest accepted request body, in bytes.' },
  request_timeout: REQUEST_TIMEOUT,
} as const satisfies OptionsSchema;

export const LISTENER_SCHEMAS = { service_http: HTTP, service_c2s: C2S, service_xmlrpc: XMLRPC } as const;

export type HttpListenerConfig = InferOptions<typeof HTTP> & { module: 'service_http' };
export type C2sListenerConfig = InferOptions<typeof C2S> & { module: 'service_c2s' };
export type XmlrpcListenerConfig = InferOptions<typeof XMLRPC> & { module: 'service_xmlrpc' };
export type ListenerConfig = HttpListenerConfig | C2sListenerConfig | XmlrpcListenerConfig;

function parseListener(value: unknown, path: OptionPath): ListenerConfig {
  if (!isPlainObject(value)) throw OptionIssues.one(path, 'expected a listener: a map with port, module and options');
  const module = value.module;
  if (typeof module !== 'string' || !(LISTENER_MODULES as readonly string[]).includes(module)) {
    // ejabberd configs say ejabberd_c2s, ejabberd_http…: point at the new names.
    const hint = typeof module === 'string' ? didYouMean(module.replace(/^ejabberd_/, 'service_'), LISTENER_MODULES) : '';
    throw OptionIssues.one([...path, 'module'], `expected one of ${LISTENER_MODULES.join(', ')}, got ${module === undefined ? 'nothing' : JSON.stringify(module)}${hint}`);
  }
  const schema = LISTENER_SCHEMAS[module as ListenerModule];
  return validateOption({ type: 'object', fields: schema, doc: '' }, value, path) as ListenerConfig;
}

export const listenerSpec: CustomOption<ListenerConfig> = {
  type: 'custom',
  expected: 'a listener (port, ip, module and options)',
  parse: parseListener,
  doc: 'One listener.',
};
