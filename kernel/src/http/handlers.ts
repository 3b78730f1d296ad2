/**
 * Request handlers by name. Modules register theirs when they start and lose them when they stop; the
 * listener resolves the name on every request, so routing follows the modules without restarting a port.
 */
import type { HttpRequestHandler } from './types.js';

export class HttpHandlerRegistry {
  readonly #handlers = new Map<string, { handler: HttpRequestHandler; owner: string }>();

  register(name: string, handler: HttpRequestHandler, owner: string): void {
    const existing = this.#handlers.get(name);
    if (existing) throw new Error(`request handler '${name}' is already registered by ${existing.owner}`);
    this.#handlers.set(name, { handler, owner });
  }

  removeOwner(owner: string): void {
    for (const [name, entry] of this.#handlers) if (entry.owner === owner) this.#handlers.delete(name);
  }

  get(name: string): HttpRequestHandler | undefined {
    return this.#handlers.get(name)?.handler;
  }

  names(): string[] {
    return [...this.#handlers.keys()].sort();
  }
}
