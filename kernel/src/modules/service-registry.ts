/**
 * The services modules provide one another (the plugin API's ServiceRef), resolved through the server's
 * awilix container by id: `service:<ref id>`. The container holds one resolver per id, which answers with
 * the implementation of the module providing it now, or undefined; a provider that stops is removed at once,
 * so a consumer never reaches a stopped module's object.
 */
import { asFunction, type AwilixContainer } from 'awilix';
import type { ServiceRef } from '@service/plugin-api';
import { ModuleError } from './errors.js';

interface Provider {
  readonly owner: string;
  readonly implementation: unknown;
}

export class ModuleServiceRegistry {
  readonly #providers = new Map<string, Provider>();

  constructor(private readonly container: AwilixContainer) {}

  /** `owner` provides `ref` from now on; another module providing it already is a conflict. */
  provide(ref: ServiceRef<unknown>, implementation: unknown, owner: string): void {
    const current = this.#providers.get(ref.id);
    if (current) throw new ModuleError('MODULE_SERVICE_CONFLICT', owner, `the service ${ref.id} is already provided by ${current.owner}`);
    if (implementation === undefined || implementation === null) {
      throw new ModuleError('MODULE_REGISTRATION_FAILED', owner, `it provides the service ${ref.id} without an implementation`);
    }
    const name = containerKey(ref.id);
    if (!this.container.hasRegistration(name)) {
      this.container.register(name, asFunction(() => this.#providers.get(ref.id)?.implementation).transient());
    }
    this.#providers.set(ref.id, { owner, implementation });
  }

  /** Everything `owner` provided: a stopping module takes its services with it. */
  removeOwner(owner: string): void {
    for (const [id, provider] of this.#providers) if (provider.owner === owner) this.#providers.delete(id);
  }

  /** The implementation of `ref` now, or undefined when no running module provides it. */
  resolve<T>(ref: ServiceRef<T>): T | undefined {
    const name = containerKey(ref.id);
    return this.container.hasRegistration(name) ? (this.container.resolve(name) as T | undefined) : undefined;
  }

  /** The module that provides `ref` now. */
  providerOf(ref: ServiceRef<unknown>): string | undefined {
    return this.#providers.get(ref.id)?.owner;
  }
}

function containerKey(id: string): string {
  return `service:${id}`;
}
