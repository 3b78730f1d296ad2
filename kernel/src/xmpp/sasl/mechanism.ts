/**
 * The registered SASL mechanisms (the contract is the plugin API's): the kernel's SCRAM and PLAIN, the OAuth
 * service's token mechanisms, and any a module adds, each tagged with its owner.
 */
import type { SaslConnection, SaslMechanism } from '@service/plugin-api';

/** Registered mechanisms, in order of preference (the order they are offered in). */
export class SaslMechanisms {
  #mechanisms: Array<{ mechanism: SaslMechanism; owner: string; rank: number }> = [];

  register(mechanism: SaslMechanism, owner: string, rank = 50): void {
    if (this.#mechanisms.some((m) => m.mechanism.name === mechanism.name)) throw new Error(`SASL mechanism ${mechanism.name} is already registered`);
    this.#mechanisms = [...this.#mechanisms, { mechanism, owner, rank }].sort((a, b) => a.rank - b.rank);
  }

  removeOwner(owner: string): void {
    this.#mechanisms = this.#mechanisms.filter((m) => m.owner !== owner);
  }

  get(name: string): SaslMechanism | undefined {
    return this.#mechanisms.find((m) => m.mechanism.name === name)?.mechanism;
  }

  /** The mechanisms to offer on a stream: registered, applicable, and not disabled by the configuration. */
  offered(connection: SaslConnection, disabled: readonly string[]): SaslMechanism[] {
    const off = new Set(disabled.map((d) => d.toUpperCase()));
    return this.#mechanisms.map((m) => m.mechanism).filter((m) => !off.has(m.name) && m.offered(connection));
  }
}
