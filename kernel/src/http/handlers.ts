/**
 * Request handlers by name. Modules register theirs when they start and lose them when they stop; the
 * listener resolves the name on every request, so routing follows the modules without restarting a port.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HttpListenerConfig } from '../config/listeners.js';
import type { HttpRequestHandler } from '@service/plugin-api';

/** Takes over a connection that asks to upgrade (WebSocket) on a handler's path. */
export type HttpUpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer, listener: HttpListenerConfig) => void;

export class HttpHandlerRegistry {
  readonly #handlers = new Map<string, { handler: HttpRequestHandler; owner: string }>();
  readonly #upgrades = new Map<string, { handler: HttpUpgradeHandler; owner: string }>();

  registerUpgrade(name: string, handler: HttpUpgradeHandler, owner: string): void {
    if (this.#upgrades.has(name)) throw new Error(`upgrade handler '${name}' is already registered`);
    this.#upgrades.set(name, { handler, owner });
  }

  upgrade(name: string): HttpUpgradeHandler | undefined {
    return this.#upgrades.get(name)?.handler;
  }

  register(name: string, handler: HttpRequestHandler, owner: string): void {
    const existing = this.#handlers.get(name);
    if (existing) throw new Error(`request handler '${name}' is already registered by ${existing.owner}`);
    this.#handlers.set(name, { handler, owner });
  }

  removeOwner(owner: string): void {
    for (const [name, entry] of this.#handlers) if (entry.owner === owner) this.#handlers.delete(name);
    for (const [name, entry] of this.#upgrades) if (entry.owner === owner) this.#upgrades.delete(name);
  }

  get(name: string): HttpRequestHandler | undefined {
    return this.#handlers.get(name)?.handler;
  }

  names(): string[] {
    return [...this.#handlers.keys()].sort();
  }
}
