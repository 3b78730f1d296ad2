/**
 * Command documentation without a running server: the kernel's declarations and those of every available
 * module (built-in, and plugins installed under the data directory), a module's commands marked loaded
 * when the configuration enables it. For `servicectl help` with the server stopped, and generated docs.
 */
import { join } from 'node:path';
import type { CommandDecl } from '@service/plugin-api';
import { KERNEL_COMMANDS } from '../kernel-commands/index.js';
import { ModuleCatalog } from '../modules/catalog.js';
import { BUILTIN_MODULES_DIR } from '../server.js';
import type { CommandDoc } from '@service/plugin-api';

export async function staticCommandDocs(options: { dataDir?: string; enabled?: readonly string[] } = {}): Promise<CommandDoc[]> {
  const docs = new Map<string, CommandDoc>();
  const add = (decls: readonly CommandDecl[], module: string, loaded: boolean) => {
    const byName = new Map<string, CommandDecl[]>();
    for (const decl of decls) byName.set(decl.name, [...(byName.get(decl.name) ?? []), decl]);
    for (const [name, versions] of byName) {
      if (docs.has(name)) continue;
      const sorted = [...versions].sort((a, b) => (a.version ?? 0) - (b.version ?? 0));
      docs.set(name, { decl: sorted[sorted.length - 1]!, older: sorted.slice(0, -1), module, loaded });
    }
  };
  add(KERNEL_COMMANDS, 'kernel', true);
  const catalog = new ModuleCatalog(BUILTIN_MODULES_DIR, options.dataDir ? join(options.dataDir, 'plugins') : '/nonexistent');
  for (const module of await catalog.available()) {
    try {
      add((await catalog.definition(module)).commands ?? [], module, options.enabled?.includes(module) ?? false);
    } catch {
      // A module that cannot load documents nothing; its error shows when it is enabled.
    }
  }
  return [...docs.values()].sort((a, b) => a.decl.name.localeCompare(b.decl.name));
}
