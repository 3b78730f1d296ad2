/**
 * The top-level options, with ejabberd.yml's names and shapes. Each option is declared once here with its
 * type, default and documentation; validation and docs/configuration.md are derived from it.
 */
import { parseAclSection } from '../access/acl.js';
import { parseAccessRulesSection } from '../access/access-rules.js';
import { parseApiPermissionsSection } from '../access/api-permissions.js';
import { parseShaperRulesSection, parseShaperSection } from '../access/shaper-rules.js';
import { LOG_LEVELS } from '../log/logger.js';
import { listenerSpec } from './listeners.js';
import { parseWorkers } from '../workers/count.js';
import type { InferOptions, OptionsSchema } from './option-spec.js';

const DOMAIN = /^(?=.{1,253}$)([\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?)(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?)*$/u;

export const TOP_LEVEL_SCHEMA = {
  hosts: {
    type: 'list',
    of: { type: 'string', pattern: DOMAIN, patternDoc: 'a domain name like example.org', doc: '' },
    nonEmpty: true,
    required: true,
    doc: 'The virtual hosts (XMPP domains) this server serves.',
  },
  loglevel: { type: 'enum', values: LOG_LEVELS, default: 'info', doc: 'Log verbosity: none, emergency, alert, critical, error, warning, notice, info or debug. set_loglevel changes it at runtime.' },
  log_file: {
    type: 'string',
    default: 'service.log',
    doc: 'The log file (JSON lines), relative to data_dir; an empty string writes none. In the foreground the log also goes to stdout.',
  },
  log_rotate_count: { type: 'integer', min: 0, max: 100, default: 1, doc: 'Rotated log files kept (service.log.1 … service.log.N); 0 keeps none.' },
  log_rotate_size: {
    type: 'integer',
    min: 1024,
    infinity: true,
    default: 10485760,
    doc: "Rotate the log file when it grows past this many bytes (checked every 10 seconds); 'infinity' rotates only on rotate_log.",
  },
  data_dir: {
    type: 'string',
    default: 'data',
    nonEmpty: true,
    doc: 'Directory for everything the server writes: the embedded database, the control socket, generated certificates, installed plugins. A relative path is relative to the configuration file.',
  },
  node_name: {
    type: 'string',
    default: 'service@localhost',
    pattern: /^[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+$/,
    patternDoc: 'a node name like service@localhost',
    doc: 'The identity of this node, as reported by status and stored with node-bound data.',
  },
  workers: {
    type: 'custom',
    expected: "a number of worker processes from 1 to 64, or 'auto' (one per core)",
    parse: parseWorkers,
    default: 1,
    doc:
      "Worker processes that serve the same listeners and the same database, so the server uses every core of the machine: 'auto' runs one per core (os.availableParallelism()), 1 (the default) one process. " +
      'Sessions on different workers reach each other over local sockets; the commands see one server. Changed at the next start (restart, not reload_config).',
  },
  listen: { type: 'list', of: listenerSpec, default: [], doc: 'Listeners: port, ip, module (service_c2s, service_http, service_xmlrpc) and the module\'s options.' },
  default_db: { type: 'enum', values: ['sql', 'mnesia'], default: 'sql', doc: "Where data lives by default: 'sql' (the database configured by the sql_* options) or 'mnesia' (the embedded store under data_dir)." },
  sql_type: { type: 'enum', values: ['sqlite', 'mysql', 'pgsql'], default: 'sqlite', doc: 'The SQL database: sqlite (embedded, the default), mysql (also MariaDB) or pgsql.' },
  sql_server: { type: 'string', default: 'localhost', doc: 'Host name or address of the SQL server (mysql, pgsql).' },
  sql_port: { type: 'integer', min: 1, max: 65535, doc: 'Port of the SQL server; defaults to 3306 for mysql and 5432 for pgsql.' },
  sql_database: { type: 'string', nonEmpty: true, doc: "Database name; for sqlite a file path relative to data_dir (default 'service.db'). Defaults to 'service' otherwise." },
  sql_username: { type: 'string', default: 'service', doc: 'User name for the SQL server.' },
  sql_password: { type: 'string', default: '', doc: 'Password for the SQL server. Never logged nor written by dump_config.' },
  sql_pool_size: { type: 'integer', min: 1, max: 1000, default: 10, doc: 'Connections to the SQL server (sqlite always uses one).' },
  auth_method: {
    type: 'list',
    of: { type: 'enum', values: ['sql', 'internal', 'mnesia'], doc: '' },
    single: true,
    default: ['sql'],
    doc: "Where accounts are stored: 'sql' (the configured database) or 'internal' (the embedded store; 'mnesia' is accepted as a synonym).",
  },
  auth_password_format: { type: 'enum', values: ['plain', 'scram'], default: 'scram', doc: 'How passwords are stored: scram (salted keys of the hashes auth_scram_hash names; the password itself is not kept) or plain.' },
  auth_scram_hash: {
    type: 'list',
    of: { type: 'enum', values: ['sha', 'sha256', 'sha512'], doc: '' },
    single: true,
    default: ['sha'],
    doc:
      "The SCRAM hashes a password is stored with (auth_password_format: scram), and so the SCRAM mechanisms offered: sha (SCRAM-SHA-1, ejabberd's default), sha256, sha512, or a list of them. " +
      'Each hash costs one PBKDF2 derivation (4096 rounds) when a password is set, SHA-512 the most: on x86 CPUs, SHA-1 and SHA-256 derivations run on the SHA instructions or several at once in vector registers, SHA-512 one at a time (about 2 ms on a 2.5 GHz Xeon). Accounts keep the hashes they were stored with until their password changes.',
  },
  auth_use_cache: { type: 'boolean', default: true, doc: 'Cache verified credentials, so that HTTP Basic authentication does not derive keys on every request.' },
  auth_cache_size: { type: 'integer', min: 1, default: 10000, doc: 'Verified credentials kept in the cache.' },
  auth_cache_life_time: { type: 'integer', min: 1, default: 600, doc: 'Seconds a verified credential stays cached. A password change or an account removal invalidates it at once.' },
  acl: { type: 'custom', expected: 'a map of ACL names to rules', parse: parseAclSection, doc: 'Named access control lists: user, server, ip, user_regexp… rules.' },
  access_rules: { type: 'custom', expected: 'a map of rule names to allow/deny entries', parse: parseAccessRulesSection, doc: 'Named access rules: ordered allow/deny entries over ACLs.' },
  api_permissions: {
    type: 'custom',
    expected: 'a map of group names to {from, who, what}',
    parse: parseApiPermissionsSection,
    doc: 'Who may run which commands from which frontend. Without it, the admin ACL may run every command but start and stop.',
  },
  shaper: {
    type: 'custom',
    expected: 'a map of shaper names to rates, like normal: 1000 or fast: {rate: 50000, burst_size: 100000}',
    parse: parseShaperSection,
    doc: "Named traffic shapers (ejabberd's): bytes per second a connection may send, as a number (the burst is one second's worth) or {rate, burst_size}. Listeners use them through shaper_rules or by name.",
  },
  shaper_rules: {
    type: 'custom',
    expected: 'a map of rule names to values, like max_user_sessions: 10 or c2s_shaper: {none: admin, normal: all}',
    parse: parseShaperRulesSection,
    doc:
      "Rules that choose a value by ACL, like access rules (the first matching entry wins): a shaper name or none (c2s_shaper, named by a listener's shaper option), or a number. " +
      'max_user_sessions is the number of sessions an account may have at once (default infinity); a resource bound beyond it is refused with the policy-violation stream error.',
  },
  modules: {
    type: 'map',
    values: { type: 'any', doc: '' },
    keyPattern: /^[a-z][a-z0-9_]*$/,
    keyDoc: 'a module name like mod_http_api',
    default: {},
    doc: 'Enabled modules, each with its options ({} for the defaults).',
  },
  disable_sasl_mechanisms: {
    type: 'list',
    of: { type: 'string', nonEmpty: true, doc: '' },
    single: true,
    default: [],
    doc: 'SASL mechanisms not offered to clients, e.g. X-OAUTH2. host_config may set it per virtual host.',
  },
  host_config: {
    type: 'map',
    keyPattern: DOMAIN,
    keyDoc: 'a virtual host listed in hosts',
    values: {
      type: 'object',
      fields: {
        disable_sasl_mechanisms: {
          type: 'list',
          of: { type: 'string', nonEmpty: true, doc: '' },
          single: true,
          doc: 'SASL mechanisms not offered on this virtual host, instead of the top-level list.',
        },
        modules: {
          type: 'any',
          doc: "Per-host modules on this virtual host: a module's options here are merged over its top-level ones, `false` disables it here, and a module listed here only runs on this host. Only modules that run per host (see each module's reference).",
        },
      },
      doc: '',
    },
    default: {},
    doc: "Options that differ per virtual host, replacing the top-level value there (ejabberd's host_config): disable_sasl_mechanisms, and modules for the modules that run per host.",
  },
  certfiles: { type: 'list', of: { type: 'string', nonEmpty: true, doc: '' }, single: true, default: [], doc: 'PEM files with certificates and keys. When empty, a self-signed certificate is generated under data_dir.' },
  oauth_access: { type: 'string', default: 'none', doc: "Access rule that says who may obtain OAuth tokens; 'all' allows every account." },
  oauth_expire: { type: 'integer', min: 1, default: 3600, doc: 'Token lifetime in seconds, and the cap on a requested ttl.' },
  oauth_use_cache: { type: 'boolean', default: true, doc: 'Cache token look-ups. A revocation still takes effect at once.' },
  oauth_cache_size: { type: 'integer', min: 1, default: 1000, doc: 'Tokens kept in the look-up cache.' },
  oauth_cache_life_time: { type: 'integer', min: 1, default: 3600, doc: 'Seconds a token look-up stays cached.' },
  oauth_cache_missed: { type: 'boolean', default: true, doc: 'Also cache look-ups of tokens that do not exist.' },
  oauth_cache_rest_failure_life_time: { type: 'integer', min: 1, infinity: true, default: Infinity, doc: 'Seconds a failed look-up of a remote token store stays cached.' },
  oauth_client_id_check: { type: 'enum', values: ['allow', 'db', 'deny'], default: 'db', doc: "How the token endpoint checks client_id: 'db' requires a registered client, 'allow' accepts any, 'deny' refuses all." },
  oauth_db_type: { type: 'enum', values: ['sql', 'mnesia'], doc: "Where tokens and clients are stored; defaults to default_db." },
  oauth_refresh_token_expire: {
    type: 'integer',
    min: 1,
    default: 2592000,
    doc: 'Lifetime in seconds of refresh tokens (authorization code flow); each use replaces the refresh token.',
  },
  oauth_issuer: {
    type: 'string',
    pattern: /^https?:\/\/[^\s#?]+$/,
    patternDoc: 'an absolute http(s) URL without query or fragment, like https://xmpp.example.org/oauth',
    doc: "Public URL of the /oauth handler, as clients reach it (behind a proxy). Default: http(s)://<first host>:<port><mount> of the listener a request arrives on.",
  },
  login_failures_per_account: {
    type: 'integer',
    min: 1,
    default: 5,
    doc: 'Failed logins to one account from one address before that address may not log in to that account for login_ban_lifetime seconds. Counts every way in: XMPP, HTTP Basic on /api and XML-RPC, the OAuth password grant and form. Logins from other addresses are not affected.',
  },
  login_failures_per_address: {
    type: 'integer',
    min: 1,
    doc: "Deprecated: enable mod_fail2ban and set its c2s_max_auth_failures instead. Failed logins from one address, to any accounts, before the address may not log in at all for login_ban_lifetime seconds. Not set (the default), addresses are banned only by mod_fail2ban; set, it bans addresses while mod_fail2ban is not running, and the server warns at start.",
  },
  login_ban_lifetime: {
    type: 'integer',
    min: 1,
    default: 3600,
    doc: "Seconds a ban of one account at one address lasts, and the span its failed logins are counted over (also the lifetime of the deprecated login_failures_per_address; mod_fail2ban's address bans last c2s_auth_ban_lifetime).",
  },
  login_ban_exempt: { type: 'string', default: 'none', doc: 'Access rule naming addresses that failed-login limits never ban (for example a trusted network).' },
  allow_contrib_modules: { type: 'boolean', default: true, doc: 'Whether module_install and module_upgrade may install plugins from the registries (as in ejabberd).' },
  plugin_sources: {
    type: 'list',
    of: { type: 'string', nonEmpty: true, doc: '' },
    single: true,
    default: ['bundled'],
    doc:
      'Registries plugins are installed from, searched in order: `bundled` (the plugins-registry/ directory shipped with the server, offline), ' +
      'a directory path (relative to this file), an http(s) URL of a directory with the same layout, or `npm:<registry URL>` for an npm-compatible registry (packages with the `service-plugin` keyword).',
  },
  plugin_trusted_keys: {
    type: 'map',
    values: { type: 'string', nonEmpty: true, doc: '' },
    default: {},
    doc:
      "Publishers whose signed plugins may be installed: publisher name → ed25519 public key (base64 SPKI, as a publisher's .pub file). " +
      'When neither this nor plugin_sources is set, the bundled registry\'s example publisher (service-examples) is trusted.',
  },
} as const satisfies OptionsSchema;

export type TopLevelOptions = InferOptions<typeof TOP_LEVEL_SCHEMA>;
