/**
 * The registry of loaded commands. A command may have several definitions, one per API version where it
 * changed; a call for version N gets the newest definition at or below N.
 */
import type { CommandDecl, CommandHandler, RegisteredCommand } from '@service/plugin-api';

export class CommandRegistry {
  /** name → definitions, ascending by version. */
  readonly #byName = new Map<string, RegisteredCommand[]>();
  #listeners: Array<() => void> = [];

  register(decl: CommandDecl, handler: CommandHandler<CommandDecl>, module: string): void {
    const version = decl.version ?? 0;
    const list = this.#byName.get(decl.name) ?? [];
    const clash = list.find((c) => c.version === version);
    if (clash) {
      throw new Error(`command '${decl.name}' (version ${version}) is already registered by ${clash.module}`);
    }
    list.push({ decl, handler, module, version });
    list.sort((a, b) => a.version - b.version);
    this.#byName.set(decl.name, list);
    this.#changed();
  }

  /** Removes every definition registered by `module`; returns the names that disappeared. */
  unregisterModule(module: string): string[] {
    const gone: string[] = [];
    for (const [name, list] of this.#byName) {
      const kept = list.filter((c) => c.module !== module);
      if (kept.length === list.length) continue;
      if (kept.length) this.#byName.set(name, kept);
      else {
        this.#byName.delete(name);
        gone.push(name);
      }
    }
    if (gone.length) this.#changed();
    return gone;
  }

  /** The definition for a call at API `version` (the latest by default). */
  resolve(name: string, version = Number.POSITIVE_INFINITY): RegisteredCommand | undefined {
    const list = this.#byName.get(name);
    if (!list) return undefined;
    for (let i = list.length - 1; i >= 0; i--) if (list[i]!.version <= version) return list[i];
    return undefined;
  }

  /** Every version of a command, oldest first. */
  versions(name: string): readonly RegisteredCommand[] {
    return this.#byName.get(name) ?? [];
  }

  has(name: string): boolean {
    return this.#byName.has(name);
  }

  /** The latest definition of every command, sorted by name. */
  latest(): RegisteredCommand[] {
    return [...this.#byName.keys()].sort().map((name) => this.resolve(name)!);
  }

  names(): string[] {
    return [...this.#byName.keys()].sort();
  }

  /** Called after every change (commands appearing or vanishing). */
  onChange(listener: () => void): () => void {
    this.#listeners.push(listener);
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}
