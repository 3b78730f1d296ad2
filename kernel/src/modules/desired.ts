/**
 * What the configuration asks the module manager to run: each module that runs for the whole server once,
 * each per-host module once per virtual host it is enabled on (host_config merged over modules).
 */
import type { Config } from '../config/load.js';
import { instanceKey, type DesiredModules, type DesiredInstance } from './manager.js';

export function desiredModules(config: Pick<Config, 'modules' | 'perHostModules' | 'hostModules'>): DesiredModules {
  const desired = new Map<string, DesiredInstance>();
  for (const [module, options] of config.modules) if (!config.perHostModules.has(module)) desired.set(instanceKey(module), { module, options });
  for (const [host, modules] of config.hostModules) {
    for (const [module, options] of modules) desired.set(instanceKey(module, host), { module, host, options });
  }
  return desired;
}
