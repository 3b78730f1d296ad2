/**
 * Converts an ejabberd legacy configuration (ejabberd.cfg, Erlang terms, ejabberd 2.x) into this server's
 * YAML, as ejabberd's own convert_to_yaml did for ejabberd.yml: hosts, loglevel, listeners (c2s, http,
 * xmlrpc), ACLs, allow/deny access rules, the authentication method, the SQL server (odbc_server) and the
 * modules this server has, with the options they accept. Everything else is listed, with its line and why,
 * in a comment block at the top of the output and in the result, never dropped silently.
 */
import { stringify } from 'yaml';
import type { ModuleLookup } from '../../config/load.js';
import { OptionIssues, validateOption, type OptionSpec } from '../../config/option-spec.js';
import { LISTENER_SCHEMAS } from '../../config/listeners.js';
import { formatTerm, lineOf, parseErlangTerms, type ErlTerm } from './erlang-terms.js';

/** Something of the old file with no equivalent here. */
export interface Unmapped {
  readonly line: number;
  /** The option as written (shortened), e.g. `{shaper, normal, {maxrate, 1000}}`. */
  readonly option: string;
  readonly reason: string;
}

export interface ConvertedConfig {
  readonly yaml: string;
  readonly unmapped: readonly Unmapped[];
}

/** ejabberd 2.x log levels 0–5. */
const LOGLEVELS = ['none', 'critical', 'error', 'warning', 'info', 'debug'] as const;

type Yaml = string | number | boolean | null | Yaml[] | { [key: string]: Yaml };

const text = (t: ErlTerm | undefined): string | undefined => (t && (t.kind === 'string' || t.kind === 'binary' || t.kind === 'atom') ? t.value : undefined);
const atom = (t: ErlTerm | undefined): string | undefined => (t?.kind === 'atom' ? t.value : undefined);
const int = (t: ErlTerm | undefined): number | undefined => (t?.kind === 'integer' ? t.value : undefined);
const items = (t: ErlTerm | undefined): readonly ErlTerm[] | undefined => (t?.kind === 'list' ? t.items : t?.kind === 'string' && t.value === '' ? [] : undefined);
const tuple = (t: ErlTerm | undefined): readonly ErlTerm[] | undefined => (t?.kind === 'tuple' ? t.items : undefined);

function short(term: ErlTerm): string {
  const s = formatTerm(term).replace(/\s+/g, ' ');
  return s.length > 100 ? `${s.slice(0, 97)}...` : s;
}

/** A term as plain YAML data (for options copied as they are). */
function plain(term: ErlTerm): Yaml {
  switch (term.kind) {
    case 'atom':
      return term.value === 'true' ? true : term.value === 'false' ? false : term.value === 'infinity' ? 'infinity' : term.value;
    case 'string':
    case 'binary':
      return term.value;
    case 'integer':
    case 'float':
      return term.value;
    case 'list': {
      // A proplist becomes a map; any other list a list.
      const pairs = term.items.map((i) => (i.kind === 'tuple' && i.items.length === 2 && i.items[0]!.kind === 'atom' ? i.items : undefined));
      if (term.items.length && pairs.every(Boolean)) return Object.fromEntries(pairs.map((p) => [(p![0] as { value: string }).value, plain(p![1]!)]));
      return term.items.map(plain);
    }
    case 'tuple':
      return term.items.map(plain);
    case 'map':
      return Object.fromEntries(term.entries.map(([k, v]) => [String(plain(k)), plain(v)]));
  }
}

/** ejabberd 2.x IP addresses: {127,0,0,1}, {0,0,0,0,0,0,0,1} or "127.0.0.1". */
function ipOf(term: ErlTerm | undefined): string | undefined {
  const s = text(term);
  if (s !== undefined) return s;
  const parts = tuple(term)?.map(int);
  if (!parts || parts.some((p) => p === undefined)) return undefined;
  if (parts.length === 4) return parts.join('.');
  if (parts.length === 8) return parts.map((p) => p!.toString(16)).join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
  return undefined;
}

export async function convertEjabberdCfg(source: string, file: string, modules: Pick<ModuleLookup, 'available' | 'definition'>): Promise<ConvertedConfig> {
  const terms = parseErlangTerms(source, file);
  const unmapped: Unmapped[] = [];
  const skip = (line: number, term: ErlTerm, reason: string) => unmapped.push({ line: lineOf(term) ?? line, option: short(term), reason });
  const out: Record<string, Yaml> = {};
  const acl: Record<string, Array<Record<string, Yaml>>> = {};
  const rules: Record<string, Array<Record<string, Yaml>>> = {};
  const mods: Record<string, Record<string, Yaml>> = {};
  const listen: Array<Record<string, Yaml>> = [];
  const macros = new Map<string, ErlTerm>();
  const available = new Set(await modules.available());

  // Macros first (ejabberd 13+ files), so that their uses can be replaced wherever they are.
  for (const { term } of terms) {
    const t = tuple(term);
    if (atom(t?.[0]) === 'define_macro' && t!.length === 3 && atom(t![1])) macros.set(atom(t![1])!, t![2]!);
  }
  const expand = (term: ErlTerm): ErlTerm => {
    if (term.kind === 'atom' && macros.has(term.value)) return macros.get(term.value)!;
    if (term.kind !== 'tuple' && term.kind !== 'list') return term;
    const expanded = term.items.map(expand);
    // Unchanged terms are kept as they are: they carry their lines.
    return expanded.every((t, i) => t === term.items[i]) ? term : { kind: term.kind, items: expanded };
  };

  for (const { term: raw, line } of terms) {
    const term = expand(raw);
    const t = tuple(term);
    const key = atom(t?.[0]);
    if (!t || !key) {
      if (term.kind === 'atom' && term.value === 'override_acls') skip(line, term, 'override_acls has no equivalent: the file is the only configuration');
      else skip(line, term, 'not an option tuple');
      continue;
    }
    switch (key) {
      case 'hosts': {
        const hosts = items(t[1])?.map(text);
        if (!hosts || hosts.some((h) => h === undefined)) skip(line, term, 'expected a list of host names');
        else out.hosts = hosts as string[];
        break;
      }
      case 'loglevel': {
        const level = int(t[1]) ?? atom(t[1]);
        if (typeof level === 'number' && level >= 0 && level <= 5) out.loglevel = LOGLEVELS[level]!;
        else if (typeof level === 'string' && ['none', 'emergency', 'alert', 'critical', 'error', 'warning', 'notice', 'info', 'debug'].includes(level)) out.loglevel = level;
        else skip(line, term, 'expected a log level from 0 to 5');
        break;
      }
      case 'listen':
        for (const entry of items(t[1]) ?? []) {
          const converted = await convertListener(entry, available, (reason, what = entry) => skip(line, what, reason));
          if (converted) listen.push(converted);
        }
        if (!items(t[1])) skip(line, term, 'expected a list of listeners');
        break;
      case 'acl': {
        const name = atom(t[1]) ?? text(t[1]);
        const rule = name ? aclRule(t[2]) : undefined;
        if (!name || !rule) skip(line, term, 'an ACL rule with no equivalent here');
        else if (name === 'all' || name === 'none') skip(line, term, `'${name}' is built in`);
        else (acl[name] ??= []).push(rule);
        break;
      }
      case 'access': {
        const name = atom(t[1]);
        const entries = items(t[2]);
        if (!name || !entries) {
          skip(line, term, 'expected {access, Name, [{allow|deny, ACL}]}');
          break;
        }
        const converted: Array<Record<string, Yaml>> = [];
        let ok = true;
        for (const entry of entries) {
          const e = tuple(entry);
          const action = atom(e?.[0]);
          const who = atom(e?.[1]);
          if (e?.length === 2 && (action === 'allow' || action === 'deny') && who) converted.push({ [action]: who });
          else ok = false;
        }
        if (!ok) skip(line, term, 'an access rule with values other than allow/deny (shaper or number rules, ejabberd\'s shaper_rules) has no equivalent here');
        else if (converted.length) rules[name] = converted;
        else skip(line, term, 'an empty access rule');
        break;
      }
      case 'auth_method': {
        const methods = (items(t[1]) ?? [t[1]!]).map(atom);
        const mapped = methods.map((m) => (m === 'internal' ? 'internal' : m === 'odbc' || m === 'sql' ? 'sql' : undefined));
        if (mapped.some((m) => m === undefined)) skip(line, term, 'only internal and odbc authentication exist here (no external, ldap, anonymous or pam)');
        const kept = [...new Set(mapped.filter((m): m is 'internal' | 'sql' => m !== undefined))];
        if (kept.length) out.auth_method = kept.length === 1 ? kept[0]! : kept;
        break;
      }
      case 'auth_password_format': {
        const f = atom(t[1]);
        if (f === 'plain' || f === 'scram') out.auth_password_format = f;
        else skip(line, term, 'expected plain or scram');
        break;
      }
      case 'odbc_server':
      case 'sql_server': {
        const sql = tuple(t[1]);
        const type = atom(sql?.[0]);
        if (key === 'odbc_server' && sql && (type === 'mysql' || type === 'pgsql') && (sql.length === 5 || sql.length === 6)) {
          const withPort = sql.length === 6;
          out.sql_type = type;
          out.sql_server = text(sql[1]) ?? 'localhost';
          if (withPort && int(sql[2]) !== undefined) out.sql_port = int(sql[2])!;
          out.sql_database = text(sql[withPort ? 3 : 2]) ?? 'ejabberd';
          out.sql_username = text(sql[withPort ? 4 : 3]) ?? 'ejabberd';
          out.sql_password = text(sql[withPort ? 5 : 4]) ?? '';
          out.default_db = 'sql';
        } else skip(line, term, 'only {mysql|pgsql, Server, [Port,] DB, User, Password} converts (no ODBC DSN)');
        break;
      }
      case 'odbc_pool_size':
        if (int(t[1]) !== undefined) out.sql_pool_size = int(t[1])!;
        else skip(line, term, 'expected an integer');
        break;
      case 'modules':
        for (const entry of items(t[1]) ?? []) {
          const e = tuple(entry);
          const oldName = atom(e?.[0]);
          if (!oldName || e!.length !== 2) {
            skip(line, entry, 'expected {Module, Options}');
            continue;
          }
          // ejabberd 2.x had SQL variants of modules: here the storage is configured, not the module.
          const name = oldName.replace(/_odbc$/, '');
          if (!available.has(name)) {
            skip(line, entry, `module ${oldName} does not exist here`);
            continue;
          }
          mods[name] = await moduleOptions(name, oldName, items(e![1]) ?? [], modules, (reason, what) => skip(line, what, reason));
        }
        if (!items(t[1])) skip(line, term, 'expected a list of modules');
        break;
      case 'define_macro':
        break;
      default:
        skip(line, term, `option '${key}' has no equivalent here`);
    }
  }
  // A listener's access rule must exist here (ejabberd let an undefined one deny everybody).
  for (const listener of listen) {
    const rule = listener.access;
    if (typeof rule === 'string' && rule !== 'all' && rule !== 'none' && !rules[rule]) {
      unmapped.push({ line: 0, option: `listener ${listener.port} access: ${rule}`, reason: `the access rule '${rule}' is not defined (or did not convert): the listener lets everybody in; define the rule and set access again` });
      delete listener.access;
    }
  }
  if (listen.length) out.listen = listen;
  // Client streams here take their certificates from certfiles (ejabberd 2.x named one per listener).
  const certfiles = [...new Set(listen.map((l) => l.certfile).filter((c): c is string => typeof c === 'string'))];
  if (certfiles.length) out.certfiles = certfiles;
  // ejabberd let a rule name an ACL that nothing defines (it matches no one); here an ACL must exist.
  for (const entries of Object.values(rules)) {
    for (const entry of entries) {
      const who = Object.values(entry)[0] as string;
      if (who !== 'all' && who !== 'none' && !acl[who]) acl[who] = [{ user_regexp: '^$.' }];
    }
  }
  if (Object.keys(acl).length) out.acl = acl;
  if (Object.keys(rules).length) out.access_rules = rules;
  if (Object.keys(mods).length) out.modules = mods;
  if (!out.hosts) unmapped.push({ line: 0, option: 'hosts', reason: 'the file names no hosts: hosts is required, add it' });
  return { yaml: header(file, unmapped) + stringify(out, { lineWidth: 0 }), unmapped };
}

function header(file: string, unmapped: readonly Unmapped[]): string {
  const lines = [`# Converted from ${file} by convert_to_yaml.`];
  if (!unmapped.length) lines.push('# Every option was converted.');
  else {
    lines.push(`# Not converted (${unmapped.length}): no equivalent in this server. Review them:`);
    for (const u of unmapped) lines.push(`#   ${u.line ? `line ${u.line}: ` : ''}${u.option.replace(/\n/g, ' ')} -- ${u.reason}`);
  }
  return `${lines.join('\n')}\n\n`;
}

function aclRule(spec: ErlTerm | undefined): Record<string, Yaml> | undefined {
  if (spec?.kind === 'atom' && spec.value === 'all') return undefined;
  const t = tuple(spec);
  const type = atom(t?.[0]);
  if (!t || !type) return undefined;
  const a = text(t[1]);
  const b = text(t[2]);
  if (a === undefined) return undefined;
  switch (type) {
    case 'user':
      return { user: b === undefined ? a : `${a}@${b}` };
    case 'server':
    case 'server_regexp':
    case 'server_glob':
    case 'node_regexp':
    case 'node_glob':
      return t.length === 2 ? { [type]: a } : type.startsWith('node') && b !== undefined ? { [type]: `${a}@${b}` } : undefined;
    case 'user_regexp':
    case 'user_glob':
      // {user_regexp, Re, Server}: the server part only narrows; kept when it is one host.
      return b === undefined ? { [type]: a } : { [type]: `${a}@${b}` };
    case 'ip':
      return { ip: a };
    case 'shared_group':
      return { shared_group: b === undefined ? a : `${a}@${b}` };
    default:
      return undefined;
  }
}

async function convertListener(entry: ErlTerm, available: ReadonlySet<string>, skip: (reason: string, what?: ErlTerm) => void): Promise<Record<string, Yaml> | undefined> {
  const t = tuple(entry);
  if (!t || t.length < 2) return void skip('expected {Port, Module, Options}');
  let port = int(t[0]);
  let ip: string | undefined;
  const portTuple = tuple(t[0]);
  if (portTuple) {
    port = int(portTuple[0]);
    ip = ipOf(portTuple[1]);
    if (atom(portTuple[2]) === 'udp') return void skip('UDP listeners do not exist here');
  }
  const module = atom(t[1]);
  if (port === undefined || !module) return void skip('expected {Port, Module, Options}');
  const kind = module === 'ejabberd_c2s' ? 'service_c2s' : module === 'ejabberd_http' ? 'service_http' : module === 'ejabberd_xmlrpc' && available.has('service_xmlrpc') ? 'service_xmlrpc' : undefined;
  if (!kind) return void skip(`listener ${module} has no equivalent here${module === 'ejabberd_s2s_in' ? ' (no server-to-server)' : ''}`);
  const listener: Record<string, Yaml> = { port, ip: ip ?? '::', module: kind };
  const options = items(t[2]) ?? [];
  let starttls = false;
  let required = false;
  for (const option of options) {
    const o = tuple(option);
    const name = atom(option) ?? atom(o?.[0]);
    const value = o?.[1];
    const flag = option.kind === 'atom';
    if (name === 'ip' && ipOf(value)) listener.ip = ipOf(value)!;
    else if (flag && (name === 'inet6' || name === 'inet')) continue;
    else if (kind === 'service_c2s' && flag && name === 'starttls') starttls = true;
    else if (kind === 'service_c2s' && flag && name === 'starttls_required') required = starttls = true;
    else if (flag && name === 'tls') listener.tls = true;
    else if (name === 'certfile' && text(value)) listener.certfile = text(value)!;
    else if (kind === 'service_c2s' && name === 'access' && atom(value)) listener.access = atom(value)!;
    else if (kind === 'service_c2s' && name === 'max_stanza_size' && int(value) !== undefined) listener.max_stanza_size = Math.max(1024, int(value)!);
    else if (kind === 'service_http' && name === 'request_handlers') {
      const handlers: Record<string, Yaml> = {};
      for (const h of items(value) ?? []) {
        const ht = tuple(h);
        const path = (items(ht?.[0]) ?? []).map(text);
        const handler = atom(ht?.[1]);
        if (!handler || path.some((p) => p === undefined)) skip('a request handler that does not convert', h);
        else handlers[`/${path.join('/')}`] = handler.replace(/^ejabberd_/, 'service_');
      }
      listener.request_handlers = handlers;
    } else skip(`listener option '${name ?? short(option)}' of ${module} has no equivalent here`, option);
  }
  if (kind === 'service_c2s') {
    listener.starttls = starttls;
    listener.starttls_required = required;
  }
  // Each option checked against this server's listener schema: what it refuses is named, not written.
  const schema = kind === 'service_xmlrpc' ? undefined : LISTENER_SCHEMAS[kind];
  if (schema) {
    for (const [name, value] of Object.entries(listener)) {
      const spec = (schema as Record<string, OptionSpec>)[name];
      if (!spec) continue;
      try {
        validateOption(spec, value, [name]);
      } catch (err) {
        if (!(err instanceof OptionIssues)) throw err;
        skip(`listener option '${name}': ${err.issues.map((i) => i.message).join('; ')}`);
        delete listener[name];
      }
    }
  }
  return listener;
}

async function moduleOptions(
  name: string,
  oldName: string,
  options: readonly ErlTerm[],
  modules: Pick<ModuleLookup, 'definition'>,
  skip: (reason: string, what: ErlTerm) => void,
): Promise<Record<string, Yaml>> {
  let schema: Record<string, OptionSpec> = {};
  try {
    schema = ((await modules.definition(name)).options ?? {}) as typeof schema;
  } catch {
    // A module that cannot be loaded gets no options; loading the result reports why.
  }
  const kept: Record<string, Yaml> = {};
  for (const option of options) {
    const o = tuple(option);
    const key = atom(o?.[0]) ?? atom(option);
    if (!key) {
      skip(`an option of ${oldName} that does not convert`, option);
      continue;
    }
    const spec = schema[key];
    if (!spec) {
      skip(`${oldName} option '${key}' has no equivalent here`, option);
      continue;
    }
    const value = o && o.length === 2 ? plain(o[1]!) : true;
    try {
      validateOption(spec, value, ['modules', name, key]);
      kept[key] = value;
    } catch (err) {
      if (!(err instanceof OptionIssues)) throw err;
      skip(`${oldName} option '${key}': ${err.issues.map((i) => i.message).join('; ')}`, option);
    }
  }
  return kept;
}
