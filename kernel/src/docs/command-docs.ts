/**
 * What the documentation generators (help, OpenAPI, docs/commands.md) know of each command: the declarations the
 * registry holds (loaded), and, unless only the running server's are asked for, those of the modules available
 * but not running (so that a command of a disabled module is documented, marked as not loaded).
 */
import type { CommandDecl, CommandDoc, DocumentationApi } from '@service/plugin-api';
import type { CommandRegistry } from '../commands/registry.js';
import type { ModuleCatalog } from '../modules/catalog.js';
import { KERNEL_VERSION } from '../version.js';
import { docsAtVersion, openApiDocument } from './openapi.js';

export async function commandDocs(registry: CommandRegistry, catalog: ModuleCatalog, isRunning: (module: string) => boolean, runtimeOnly: boolean): Promise<CommandDoc[]> {
  const docs = new Map<string, CommandDoc>();
  for (const name of registry.names()) {
    const versions = registry.versions(name);
    const latest = versions[versions.length - 1]!;
    docs.set(name, { decl: latest.decl, older: versions.slice(0, -1).map((v) => v.decl), module: latest.module, loaded: true });
  }
  if (!runtimeOnly) {
    for (const module of await catalog.available()) {
      if (isRunning(module)) continue;
      let declared: readonly CommandDecl[] = [];
      try {
        declared = (await catalog.definition(module)).commands ?? [];
      } catch {
        continue; // A module that cannot load documents nothing; its error shows when it is enabled.
      }
      const byName = new Map<string, CommandDecl[]>();
      for (const decl of declared) byName.set(decl.name, [...(byName.get(decl.name) ?? []), decl]);
      for (const [name, decls] of byName) {
        if (docs.has(name)) continue;
        const sorted = decls.sort((a, b) => (a.version ?? 0) - (b.version ?? 0));
        docs.set(name, { decl: sorted[sorted.length - 1]!, older: sorted.slice(0, -1), module, loaded: false });
      }
    }
  }
  return [...docs.values()].sort((a, b) => a.decl.name.localeCompare(b.decl.name));
}

/** The documentation service modules see (`services.docs`): the commands as above, and the OpenAPI document of the loaded ones. */
export function documentationApi(docs: (runtimeOnly: boolean) => Promise<CommandDoc[]>): DocumentationApi {
  return {
    commands: (options) => docs(options?.runtimeOnly ?? false),
    openApi: async ({ version, serverUrl }) => {
      const loaded = await docs(true);
      const atVersion = version === undefined ? loaded : docsAtVersion(loaded, version);
      const title = version === undefined ? 'Administration command API' : `Administration command API, version ${version}`;
      return openApiDocument(atVersion, { title, version: KERNEL_VERSION, serverUrl });
    },
  };
}
