/**
 * Modules per virtual host (ejabberd's `host_config: <host>: modules:`). A module that declares `perHost`
 * runs once for each host it is enabled on, each time with that host's options:
 *
 *   modules:                      host_config:
 *     mod_version: {show_os: true}  example.org:
 *                                     modules:
 *                                       mod_version: {show_os: false}   # other options on this host
 *                                       mod_ping: {}                      # enabled on this host only
 *                                   example.net:
 *                                     modules:
 *                                       mod_version: false               # not on this host
 *
 * A host's entry is merged over the top-level one (its options win); `false` disables the module there. A module
 * that runs for the whole server cannot be changed per host: that is a configuration error naming it.
 */
import type { ModuleDefinition } from '@service/plugin-api';
import { OptionIssues, didYouMean, isPlainObject, validateOptions, type OptionIssue } from './option-spec.js';

/** Per host, the per-host modules enabled there, with their validated options. */
export type HostModules = ReadonlyMap<string, ReadonlyMap<string, Readonly<Record<string, unknown>>>>;

export interface HostModulesInput {
  readonly hosts: readonly string[];
  /** host_config as written (keys as written, per-host `modules` maps unvalidated). */
  readonly hostConfig: Readonly<Record<string, unknown>>;
  /** The top-level `modules:` as written. */
  readonly configured: Readonly<Record<string, unknown>>;
  /** The top-level modules, validated (implied ones included). */
  readonly enabled: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  readonly available: readonly string[];
  definition(name: string): Promise<ModuleDefinition | undefined>;
}

export async function resolveHostModules(input: HostModulesInput, issues: OptionIssue[]): Promise<{ hostModules: HostModules; perHost: ReadonlySet<string> }> {
  const perHost = new Set<string>();
  for (const name of input.available) if ((await input.definition(name))?.perHost) perHost.add(name);
  const hostModules = new Map<string, Map<string, Readonly<Record<string, unknown>>>>();
  for (const host of input.hosts) {
    const here = new Map<string, Readonly<Record<string, unknown>>>();
    for (const [name, options] of input.enabled) if (perHost.has(name)) here.set(name, options);
    const written = Object.entries(input.hostConfig).find(([key]) => key.toLowerCase() === host.toLowerCase());
    const modules = written && isPlainObject(written[1]) ? written[1].modules : undefined;
    if (modules !== undefined && !isPlainObject(modules)) {
      issues.push({ path: ['host_config', written![0], 'modules'], message: 'expected a map of module names to options, or false to disable one on this host' });
    } else if (modules) {
      for (const [name, value] of Object.entries(modules)) {
        const path = ['host_config', written![0], 'modules', name];
        if (!input.available.includes(name)) {
          issues.push({ path, message: `unknown module${didYouMean(name, input.available)}`, atKey: true });
          continue;
        }
        if (!perHost.has(name)) {
          issues.push({ path, message: `${name} runs for the whole server: it cannot be enabled, disabled or configured per host`, atKey: true });
          continue;
        }
        if (value === false) {
          here.delete(name);
          continue;
        }
        if (value !== null && !isPlainObject(value)) {
          issues.push({ path, message: 'expected the module\'s options on this host (a map, {} for the top-level ones), or false to disable it here' });
          continue;
        }
        const top = isPlainObject(input.configured[name]) ? (input.configured[name] as Record<string, unknown>) : {};
        try {
          here.set(name, validateOptions((await input.definition(name))?.options ?? {}, { ...top, ...(value ?? {}) }, path));
        } catch (err) {
          if (err instanceof OptionIssues) issues.push(...err.issues);
          else throw err;
        }
      }
    }
    hostModules.set(host, here);
  }
  return { hostModules, perHost };
}
