/**
 * The installer's settings from the running configuration: allow_contrib_modules, plugin_sources (with
 * `bundled` standing for the plugins-registry/ directory shipped with the server) and plugin_trusted_keys.
 * When an operator sets neither source nor key, the bundled registry's example publisher is trusted, so a
 * newcomer can try `module_install mod_example` offline; naming any source or key trusts only what is named.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/load.js';
import type { PluginSettings } from './installer.js';

/** The registry shipped with the server, beside the kernel in the repository. */
export const BUNDLED_REGISTRY = fileURLToPath(new URL('../../../plugins-registry/', import.meta.url)).replace(/\/$/, '');
/** The bundled registry's example publisher. */
export const EXAMPLE_PUBLISHER = 'service-examples';

export function pluginSettings(config: Config): PluginSettings {
  const chosen = 'plugin_sources' in config.raw || 'plugin_trusted_keys' in config.raw;
  return {
    allowed: config.allow_contrib_modules,
    sources: config.plugin_sources.map((source) => (source === 'bundled' ? BUNDLED_REGISTRY : source)),
    baseDir: dirname(config.file),
    trustedKeys: chosen ? config.plugin_trusted_keys : exampleKey(),
    configured: Object.keys((config.raw.modules as Record<string, unknown> | undefined) ?? {}),
  };
}

function exampleKey(): Record<string, string> {
  try {
    return { [EXAMPLE_PUBLISHER]: readFileSync(join(BUNDLED_REGISTRY, 'keys', `${EXAMPLE_PUBLISHER}.pub`), 'utf8').trim() };
  } catch {
    return {}; // A server installed without its registry trusts nobody by default.
  }
}
