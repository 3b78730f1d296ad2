/**
 * What service discovery (XEP-0030) announces, as modules registered it (the registration shape is the plugin
 * API's): features and identities of the server and of accounts.
 */
import type { DiscoIdentity, DiscoRegistration, DiscoScope } from '@service/plugin-api';

export class DiscoRegistry {
  #entries: Array<DiscoRegistration & { owner: string; host?: string }> = [];

  /** `host`: announced on that virtual host only (a per-host module's), else on every host. */
  register(registration: DiscoRegistration, owner: string, host?: string): void {
    this.#entries.push({ ...registration, owner, ...(host ? { host } : {}) });
  }

  removeOwner(owner: string): void {
    this.#entries = this.#entries.filter((e) => e.owner !== owner);
  }

  features(scope: DiscoScope, host?: string): string[] {
    return [...new Set(this.#on(scope, host).flatMap((e) => e.features ?? []))].sort();
  }

  identities(scope: DiscoScope, host?: string): DiscoIdentity[] {
    return this.#on(scope, host).flatMap((e) => e.identities ?? []);
  }

  /** Entries of a scope that apply on `host` (every entry when no host is asked about). */
  #on(scope: DiscoScope, host: string | undefined) {
    return this.#entries.filter((e) => e.scope === scope && (e.host === undefined || host === undefined || e.host === host));
  }
}
