/**
 * Listener declarations (`listen:`), after ejabberd's: each entry names a port, an address and the
 * listener module (its kind), plus that kind's options. The kernel's kinds are service_c2s and service_http;
 * a module may add its own (service_xmlrpc): such an entry is checked here for the options every listener
 * has, and against the module's declaration once the modules are known (load.ts).
 */
import { OptionIssues, didYouMean, isPlainObject, validateOption, type InferOptions, type OptionPath, type OptionsSchema } from './option-spec.js';
import { type CustomOption } from '@service/plugin-api';

export const KERNEL_LISTENERS = ['service_c2s', 'service_http'] as const;
export type KernelListener = (typeof KERNEL_LISTENERS)[number];

export const LISTENER_COMMON = {
  port: { type: 'integer', min: 0, max: 65535, required: true, doc: 'TCP port; 0 picks a free one (useful in tests).' },
  ip: { type: 'string', default: '::', doc: "Address to listen on; '::' means every IPv6 and IPv4 address." },
  module: { type: 'string', pattern: /^[a-z][a-z0-9_]*$/, patternDoc: 'a listener kind such as service_c2s', required: true, doc: 'What the listener serves: service_c2s, service_http, or a kind a module adds (service_xmlrpc).' },
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

/** ejabberd's listener option: a shaper rule (evaluated for each client) or a shaper's name. */
const SHAPER = {
  type: 'string',
  default: 'none',
  nonEmpty: true,
  doc:
    "Traffic shaper for what clients send: a rule of shaper_rules (ejabberd's c2s_shaper) or a shaper's name, or none. Before authentication it is chosen by the client's address; " +
    'once a resource is bound, again by its account and address (so `none: admin` leaves admins unshaped). A client over its rate is read more slowly, never disconnected.',
} as const;

/** New connections one address may open per minute on one listener (not an ejabberd option). */
const MAX_CONNECTION_RATE = {
  type: 'integer',
  min: 1,
  infinity: true,
  default: Infinity,
  doc:
    'New connections one address may open on this listener per minute (a burst of that many, then one every 60/N seconds); a connection beyond it is refused with the policy-violation stream error ' +
    '(429 for a WebSocket upgrade). Counted by each worker process. Default: infinity.',
} as const;

const HTTP = {
  ...LISTENER_COMMON,
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
  shaper: { ...SHAPER, doc: `For XMPP over WebSocket on this listener (service_http_ws). ${SHAPER.doc}` },
  max_connection_rate: { ...MAX_CONNECTION_RATE, doc: `For XMPP over WebSocket upgrades on this listener. ${MAX_CONNECTION_RATE.doc}` },
} as const satisfies OptionsSchema;

const C2S = {
  ...LISTENER_COMMON,
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
  shaper: SHAPER,
  max_connection_rate: MAX_CONNECTION_RATE,
} as const satisfies OptionsSchema;

export const LISTENER_SCHEMAS = { service_http: HTTP, service_c2s: C2S } as const;

export type HttpListenerConfig = InferOptions<typeof HTTP> & { module: 'service_http' };
export type C2sListenerConfig = InferOptions<typeof C2S> & { module: 'service_c2s' };
/** A listener of a kind a module adds: the common options checked, the kind's own ones once modules are known. */
export type ModuleListenerConfig = InferOptions<typeof LISTENER_COMMON> & Readonly<Record<string, unknown>> & { module: string };
export type ListenerConfig = HttpListenerConfig | C2sListenerConfig | ModuleListenerConfig;

export function isKernelListener(config: ListenerConfig): config is HttpListenerConfig | C2sListenerConfig {
  return (KERNEL_LISTENERS as readonly string[]).includes(config.module);
}

function parseListener(value: unknown, path: OptionPath): ListenerConfig {
  if (!isPlainObject(value)) throw OptionIssues.one(path, 'expected a listener: a map with port, module and options');
  const module = value.module;
  if (typeof module === 'string' && (KERNEL_LISTENERS as readonly string[]).includes(module)) {
    return validateOption({ type: 'object', fields: LISTENER_SCHEMAS[module as KernelListener], doc: '' }, value, path) as ListenerConfig;
  }
  // Another kind is a module's: the options every listener has now, its own with the module's declaration.
  const common = Object.fromEntries(Object.entries(value).filter(([key]) => key in LISTENER_COMMON));
  const checked = validateOption({ type: 'object', fields: LISTENER_COMMON, doc: '' }, common, path) as Record<string, unknown>;
  return { ...value, ...checked } as ModuleListenerConfig;
}

export const listenerSpec: CustomOption<ListenerConfig> = {
  type: 'custom',
  expected: 'a listener (port, ip, module and options)',
  parse: parseListener,
  doc: 'One listener.',
};
