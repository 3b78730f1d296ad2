/**
 * What service discovery (XEP-0030) announces, as modules registered it (the registration shape is the plugin
 * API's): features and identities of the server and of accounts.
 */
import type { DiscoIdentity, DiscoRegistration, DiscoScope } from '@service/plugin-api';

export class DiscoRegistry {
  #entries: Array<DiscoRegistration & { owner: string }> = [];

  register(registration: DiscoRegistration, owner: string): void {
    this.#entries.push({ ...registration, owner });
  }

  removeOwner(owner: string): void {
    this.#entries = this.#entries.filter((e) => e.owner !== owner);
  }

  features(scope: DiscoScope): string[] {
    return [...new Set(this.#entries.filter((e) => e.scope === scope).flatMap((e) => e.features ?? []))].sort();
  }

  identities(scope: DiscoScope): DiscoIdentity[] {
    return this.#entries.filter((e) => e.scope === scope).flatMap((e) => e.identities ?? []);
  }
}
