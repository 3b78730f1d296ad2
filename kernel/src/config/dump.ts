/**
 * The running configuration as YAML (dump_config): every top-level option with its effective value,
 * defaults included, and each enabled module with its validated options. Secrets are masked.
 */
import { stringify } from 'yaml';
import type { Config } from './load.js';
import { TOP_LEVEL_SCHEMA } from './schema.js';

const SECRETS = new Set(['sql_password']);
/** Module options that hold secrets, by name (mod_cluster's cookie, a password, a token…), at any depth. */
const SECRET_OPTION = /password|secret|cookie|token/i;
/** Sections kept as the operator wrote them: their compiled form is not YAML. */
const AS_WRITTEN = new Set(['acl', 'access_rules', 'api_permissions', 'shaper', 'shaper_rules']);

function plain(value: unknown, maskSecrets = false): unknown {
  if (value === Infinity) return 'infinity';
  if (Array.isArray(value)) return value.map((v) => plain(v, maskSecrets));
  const entry = ([k, v]: [unknown, unknown]) => [k, maskSecrets && typeof k === 'string' && SECRET_OPTION.test(k) && typeof v === 'string' && v !== '' ? '********' : plain(v, maskSecrets)];
  if (value instanceof Map) return Object.fromEntries([...value].map(entry));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(entry));
  return value;
}

export function dumpConfig(config: Config): string {
  const out: Record<string, unknown> = {};
  const effective = config as unknown as Record<string, unknown>;
  for (const key of Object.keys(TOP_LEVEL_SCHEMA)) {
    let value = AS_WRITTEN.has(key) ? config.raw[key] : effective[key];
    if (key === 'modules') value = config.modules;
    if (value === undefined) continue;
    if (SECRETS.has(key) && value !== '') value = '********';
    out[key] = plain(value, key === 'modules');
  }
  return `# Running configuration of ${config.node_name}, dumped ${new Date().toISOString()}\n# from ${config.file}\n${stringify(out)}`;
}
