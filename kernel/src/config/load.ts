/**
 * Reads and validates a configuration file. Validation is complete before anything is applied: the server
 * refuses to start with an invalid file, and reload_config refuses to apply one and keeps running on the
 * old configuration.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { LineCounter, isMap, isNode, isScalar, isSeq, parseDocument, type Document, type Node } from 'yaml';
import { AccessControl } from '../access/access-control.js';
import type { AclDefinitions } from '../access/acl.js';
import type { AccessRuleDefinitions } from '../access/access-rules.js';
import type { ApiPermissionGroup } from '../access/api-permissions.js';
import type { ShaperDefinitions, ShaperRuleDefinitions } from '../access/shaper-rules.js';
import type { ListenerKindDecl, ModuleDefinition } from '@service/plugin-api';
import type { SqlSettings } from '../storage/database.js';
import { ConfigError, type LocatedIssue } from './errors.js';
import { resolveHostModules, type HostModules } from './host-modules.js';
import { KERNEL_LISTENERS, LISTENER_COMMON, isKernelListener, type HttpListenerConfig, type ListenerConfig } from './listeners.js';
import { KERNEL_FRONTENDS } from '../access/api-permissions.js';
import { OptionIssues, didYouMean, isPlainObject, validateOption, validateOptions, type OptionIssue, type OptionPath } from './option-spec.js';
import { TOP_LEVEL_SCHEMA, type TopLevelOptions } from './schema.js';

/** What validation needs to know about modules: which exist, and their declarations. */
export interface ModuleLookup {
  available(): Promise<string[]>;
  /** Plugins installed from a registry (module_install): enabled with their defaults unless configured. */
  installed(): Promise<string[]>;
  /** Throws an Error whose message says why a module cannot be loaded. */
  definition(name: string): Promise<ModuleDefinition>;
}

export interface ConfigContext {
  /** The modules available with this data_dir (its plugins directory counts). */
  readonly modules: (dataDir: string) => ModuleLookup;
  /** Request handlers the kernel provides itself (service_oauth…). */
  readonly kernelHandlers: readonly string[];
}

export type Config = Readonly<
  Omit<TopLevelOptions, 'acl' | 'access_rules' | 'api_permissions' | 'listen' | 'modules' | 'shaper' | 'shaper_rules'> & {
    /** Absolute path of the file this was read from. */
    file: string;
    /** data_dir resolved against the file's directory. */
    dataDir: string;
    listen: readonly ListenerConfig[];
    /** Enabled modules with validated options, in configuration order, including implied request handlers. */
    modules: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
    /** Modules enabled only because a listener routes to them. */
    impliedModules: readonly string[];
    /** Installed plugins enabled with their defaults because the file does not name them. */
    installedModules: readonly string[];
    /** Modules that run per virtual host (among those available). */
    perHostModules: ReadonlySet<string>;
    /** Per host: the per-host modules enabled there and their options (host_config merged over modules). */
    hostModules: HostModules;
    access: AccessControl;
    sql: SqlSettings;
    /** The parsed file, for dump_config. */
    raw: Readonly<Record<string, unknown>>;
    /** The file's text as read: installing a plugin validates it again without reading the file. */
    text: string;
  }
>;

export async function loadConfigFile(file: string, context: ConfigContext): Promise<Config> {
  const path = resolve(file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(path, [{ path: [], message: `cannot read the configuration file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` }]);
  }
  return parseConfig(text, path, context);
}

export async function parseConfig(text: string, file: string, context: ConfigContext): Promise<Config> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length) {
    throw new ConfigError(
      file,
      doc.errors.map((e) => {
        const pos = lineCounter.linePos(e.pos[0]);
        return { path: [], message: `YAML syntax: ${e.message.split('\n')[0]}`, line: pos.line, column: pos.col };
      }),
    );
  }
  let raw: unknown;
  try {
    // A small alias budget defeats "billion laughs" documents.
    raw = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (err) {
    throw new ConfigError(file, [{ path: [], message: (err as Error).message }]);
  }
  const locate = (issues: readonly OptionIssue[]) => issues.map((i) => locateIssue(doc, lineCounter, i));
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(file, [{ path: [], message: 'expected a map of options at the top level' }]);
  }
  const issues: OptionIssue[] = [];
  let top: TopLevelOptions | undefined;
  try {
    top = validateOptions(TOP_LEVEL_SCHEMA, withOrderedShaperRules(doc, raw as Record<string, unknown>), []) as TopLevelOptions;
  } catch (err) {
    if (!(err instanceof OptionIssues)) throw err;
    issues.push(...err.issues);
  }
  // Modules are checked even when top-level options are wrong, so one run reports every problem.
  const rawTop = raw as Record<string, unknown>;
  const dataDir = resolve(dirname(file), top?.data_dir ?? (typeof rawTop.data_dir === 'string' ? rawTop.data_dir : 'data'));
  const modules = await validateModules(
    top?.modules ?? (isPlainObject(rawTop.modules) ? rawTop.modules : {}),
    top?.listen ?? [],
    context.modules(dataDir),
    context.kernelHandlers,
    issues,
  );
  // Read from the file as written: a group refused for another reason still gets its frontends checked.
  checkFrontends(rawTop.api_permissions, modules.frontends, issues);
  const lookup = context.modules(dataDir);
  const perHost = await resolveHostModules(
    {
      hosts: top?.hosts ?? [],
      hostConfig: isPlainObject(rawTop.host_config) ? rawTop.host_config : {},
      configured: isPlainObject(rawTop.modules) ? rawTop.modules : {},
      enabled: modules.enabled,
      available: await lookup.available(),
      definition: (name) => lookup.definition(name).catch(() => undefined),
    },
    issues,
  );
  if (!top) throw new ConfigError(file, locate(issues));
  checkListeners(top, context, modules, issues);
  checkHosts(top, issues);
  let access: AccessControl | undefined;
  try {
    access = new AccessControl({
      hosts: top.hosts,
      acl: (top.acl as AclDefinitions | undefined) ?? new Map(),
      accessRules: (top.access_rules as AccessRuleDefinitions | undefined) ?? new Map(),
      apiPermissions: top.api_permissions as ApiPermissionGroup[] | undefined,
      shapers: top.shaper as ShaperDefinitions | undefined,
      shaperRules: top.shaper_rules as ShaperRuleDefinitions | undefined,
    });
  } catch (err) {
    if (err instanceof OptionIssues) issues.push(...err.issues);
    else throw err;
  }
  for (const option of ['oauth_access', 'login_ban_exempt'] as const) {
    const rule = top[option];
    if (rule !== 'all' && rule !== 'none' && access && !access.hasRule(rule)) {
      issues.push({ path: [option], message: `access rule '${rule}' is not defined in access_rules` });
    }
  }
  if (access) checkListenerShapers(top, access, issues);
  if (issues.length || !access) throw new ConfigError(file, locate(issues));

  const { acl: _acl, access_rules: _rules, api_permissions: _perms, listen: _listen, modules: _mods, shaper: _shaper, shaper_rules: _shaperRules, ...rest } = top;
  return {
    ...rest,
    file,
    dataDir,
    listen: modules.listeners,
    modules: modules.enabled,
    impliedModules: modules.implied,
    installedModules: modules.installed,
    perHostModules: perHost.perHost,
    hostModules: perHost.hostModules,
    access,
    sql: {
      type: top.sql_type,
      server: top.sql_server,
      port: top.sql_port,
      database: top.sql_database ?? (top.sql_type === 'sqlite' ? 'service.db' : 'service'),
      username: top.sql_username,
      password: top.sql_password,
      poolSize: top.sql_pool_size,
    },
    raw: raw as Record<string, unknown>,
    text,
  };
}

async function validateModules(
  configured: Readonly<Record<string, unknown>>,
  listeners: readonly ListenerConfig[],
  lookup: ModuleLookup,
  kernelHandlers: readonly string[],
  issues: OptionIssue[],
) {
  const available = await lookup.available();
  const enabled = new Map<string, Record<string, unknown>>();
  const implied: string[] = [];
  const check = async (name: string, options: unknown, path: OptionPath) => {
    if (!available.includes(name)) {
      issues.push({ path, message: `unknown module${didYouMean(name, available)}; available: ${available.join(', ') || 'none'}`, atKey: true });
      return;
    }
    let definition: ModuleDefinition;
    try {
      definition = await lookup.definition(name);
    } catch (err) {
      issues.push({ path, message: (err as Error).message, atKey: true });
      return;
    }
    try {
      enabled.set(name, validateOptions(definition.options ?? {}, options ?? {}, path));
    } catch (err) {
      if (err instanceof OptionIssues) issues.push(...err.issues);
      else throw err;
    }
  };
  for (const [name, options] of Object.entries(configured)) await check(name, options, ['modules', name]);
  // An installed plugin runs with its defaults until the file gives it options (as ejabberd's contrib modules).
  const installed: string[] = [];
  for (const name of await lookup.installed()) {
    if (configured[name] !== undefined) continue;
    await check(name, {}, ['modules', name]);
    installed.push(name);
  }
  const declared = await declarationsOf(lookup, available);
  // A listener of a module's kind implies the module, which checks the listener's own options.
  const checkedListeners = [...listeners];
  for (const [i, listener] of listeners.entries()) {
    if (isKernelListener(listener)) continue;
    const kind = declared.listenerKinds.get(listener.module);
    if (!kind) {
      const kinds = [...KERNEL_LISTENERS, ...declared.listenerKinds.keys()];
      // ejabberd configs say ejabberd_c2s, ejabberd_http…: point at the new names.
      const hint = didYouMean(listener.module.replace(/^ejabberd_/, 'service_'), kinds);
      issues.push({ path: ['listen', i, 'module'], message: `expected one of ${kinds.join(', ')}, got ${JSON.stringify(listener.module)}${hint}` });
      continue;
    }
    if (!enabled.has(kind.module) && configured[kind.module] === undefined) {
      await check(kind.module, {}, ['listen', i, 'module']);
      implied.push(kind.module);
    }
    try {
      checkedListeners[i] = validateOption({ type: 'object', fields: { ...LISTENER_COMMON, ...kind.decl.options }, doc: '' }, listener, ['listen', i]) as ListenerConfig;
    } catch (err) {
      if (err instanceof OptionIssues) issues.push(...err.issues);
      else throw err;
    }
  }
  // A listener that routes to a module's request handler implies the module, as in ejabberd.
  for (const [i, listener] of listeners.entries()) {
    if (listener.module !== 'service_http') continue;
    for (const [prefix, handler] of Object.entries((listener as HttpListenerConfig).request_handlers)) {
      if (kernelHandlers.includes(handler) || enabled.has(handler) || configured[handler] !== undefined) continue;
      if (available.includes(handler)) {
        await check(handler, {}, ['listen', i, 'request_handlers', prefix]);
        implied.push(handler);
      }
    }
  }
  return { enabled, implied, installed, listeners: checkedListeners, frontends: declared.frontends };
}

/** What the available modules declare for configuration: listener kinds (by kind) and frontend names. */
async function declarationsOf(lookup: ModuleLookup, available: readonly string[]) {
  const listenerKinds = new Map<string, { module: string; decl: ListenerKindDecl }>();
  const frontends = new Set<string>(KERNEL_FRONTENDS);
  for (const name of available) {
    let definition: ModuleDefinition;
    try {
      definition = await lookup.definition(name);
    } catch {
      continue; // A module that cannot load declares nothing; its error shows when it is enabled.
    }
    for (const [kind, decl] of Object.entries(definition.listeners ?? {})) listenerKinds.set(kind, { module: name, decl });
    for (const frontend of definition.frontends ?? []) frontends.add(frontend);
  }
  return { listenerKinds, frontends };
}

/** api_permissions `from:` names frontends the server or an available module has. */
function checkFrontends(permissions: unknown, known: ReadonlySet<string>, issues: OptionIssue[]): void {
  if (!isPlainObject(permissions)) return;
  const names = [...known].sort();
  for (const [group, value] of Object.entries(permissions)) {
    if (!isPlainObject(value)) continue;
    const from = Array.isArray(value.from) ? value.from : [value.from];
    from.forEach((frontend, i) => {
      if (typeof frontend !== 'string' || known.has(frontend)) return;
      issues.push({
        path: Array.isArray(value.from) ? ['api_permissions', group, 'from', i] : ['api_permissions', group, 'from'],
        message: `unknown frontend '${frontend}'${didYouMean(frontend.replace(/^ejabberd_/, 'service_'), names)}; expected one of ${names.join(', ')} or {tag: name}`,
      });
    });
  }
}

function checkListeners(top: TopLevelOptions, context: ConfigContext, modules: { enabled: Map<string, unknown> }, issues: OptionIssue[]): void {
  const seen = new Map<string, number>();
  const handlers = [...context.kernelHandlers, ...modules.enabled.keys()];
  top.listen.forEach((listener, i) => {
    if (listener.port !== 0) {
      const key = `${listener.ip}:${listener.port}`;
      if (seen.has(key)) issues.push({ path: ['listen', i, 'port'], message: `port ${listener.port} on ${listener.ip} is already used by listen[${seen.get(key)}]` });
      seen.set(key, i);
    }
    if (listener.module !== 'service_http') return;
    for (const [prefix, handler] of Object.entries((listener as HttpListenerConfig).request_handlers)) {
      if (!handlers.includes(handler)) {
        issues.push({
          path: ['listen', i, 'request_handlers', prefix],
          message: `unknown request handler '${handler}'${didYouMean(handler.replace(/^ejabberd_/, 'service_'), handlers)}; available: ${handlers.join(', ')}`,
        });
      }
    }
  });
}

/**
 * shaper_rules with each rule's map as an ordered Map: the first matching entry wins, and a JavaScript object
 * would put number keys first in ascending order (`{5000: admin, 100: all}` would read as 100 for everyone).
 */
function withOrderedShaperRules(doc: Document, raw: Record<string, unknown>): Record<string, unknown> {
  const section = doc.get('shaper_rules', true);
  if (!isMap(section) || !isPlainObject(raw.shaper_rules)) return raw;
  const rules: Record<string, unknown> = { ...raw.shaper_rules };
  for (const pair of section.items) {
    if (!isScalar(pair.key) || !isMap(pair.value)) continue;
    const entries = pair.value.items.map((entry): [string, unknown] => [
      String(isScalar(entry.key) ? entry.key.value : entry.key),
      isNode(entry.value) ? entry.value.toJS(doc, { maxAliasCount: 100 }) : entry.value,
    ]);
    rules[String(pair.key.value)] = new Map(entries);
  }
  return { ...raw, shaper_rules: rules };
}

/** A listener's `shaper` names a shaper rule, a shaper or none. */
function checkListenerShapers(top: TopLevelOptions, access: AccessControl, issues: OptionIssue[]): void {
  top.listen.forEach((listener, i) => {
    if (!isKernelListener(listener)) return;
    const shaper = listener.shaper;
    if (access.hasShaperOrRule(shaper)) return;
    const names = access.shaperNames();
    issues.push({ path: ['listen', i, 'shaper'], message: `unknown shaper or shaper rule '${shaper}'${didYouMean(shaper, names)}; expected one of ${names.join(', ')}` });
  });
}

function checkHosts(top: TopLevelOptions, issues: OptionIssue[]): void {
  const seen = new Set<string>();
  top.hosts.forEach((host, i) => {
    const lower = host.toLowerCase();
    if (seen.has(lower)) issues.push({ path: ['hosts', i], message: `'${host}' is listed twice` });
    seen.add(lower);
  });
  for (const host of Object.keys(top.host_config)) {
    if (!seen.has(host.toLowerCase())) {
      issues.push({ path: ['host_config', host], message: `'${host}' is not one of the hosts${didYouMean(host, top.hosts)}`, atKey: true });
    }
  }
}

/** Finds where an issue's path is in the file, for `file:line:column` messages. */
function locateIssue(doc: Document, lines: LineCounter, issue: OptionIssue): LocatedIssue {
  let node: unknown = doc.contents;
  let offset: number | undefined = (node as Node | null)?.range?.[0];
  for (const [i, part] of issue.path.entries()) {
    const last = i === issue.path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) === String(part) : false));
      if (!pair) break;
      const keyOffset = (pair.key as Node).range?.[0];
      if (last && issue.atKey) {
        offset = keyOffset;
        break;
      }
      node = pair.value;
      offset = (node as Node | null)?.range?.[0] ?? keyOffset;
    } else if (isSeq(node) && typeof part === 'number') {
      node = node.items[part];
      offset = (node as Node | undefined)?.range?.[0] ?? offset;
    } else break;
  }
  if (offset === undefined) return issue;
  const pos = lines.linePos(offset);
  return { ...issue, line: pos.line, column: pos.col };
}

