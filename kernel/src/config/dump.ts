/**
 * The running configuration as YAML (dump_config): every top-level option with its effective value,
 * defaults included, and each enabled module with its validated options. Secrets are masked.
 */
import { stringify } from 'yaml';
import type { Config } from './load.js';
import { TOP_LEVEL_SCHEMA } from './schema.js';

const SECRETS = new Set(['sql_password']);
/** Sections kept as the operator wrote them: their compiled form is not YAML. */
const AS_WRITTEN = new Set(['acl', 'access_rules', 'api_permissions']);

function plain(value: unknown): unknown {
  if (value === Infinity) return 'infinity';
  if (Array.isArray(value)) return value.map(plain);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [k, plain(v)]));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
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
    out[key] = plain(value);
  }
  return `# Running configuration of ${config.node_name}, dumped ${new Date().toISOString()}\n# from ${config.file}\n${stringify(out)}`;
}
