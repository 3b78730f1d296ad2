/**
 * Typed references to what a module offers other modules (Backstage-style service refs). The providing
 * module declares the ref in a small API package its consumers import (types and the ref, no code of the
 * module), lists it in `provides` and hands an implementation from `start`; a consumer lists it in `consumes`
 * and gets the implementation with `ctx.use(ref)`. The server resolves it by id, from the running provider,
 * so a consumer never imports the provider's code and a plugin built elsewhere gets the same object.
 */
export interface ServiceRef<T> {
  /** Unique across the server: `<module>.<service>`, e.g. `mod_roster.roster`. */
  readonly id: string;
  /** The module expected to provide it (for error messages and docs). */
  readonly provider: string;
  /** Carries the service's type; never set at runtime. */
  readonly T?: T;
}

export function createServiceRef<T>(options: { id: string; provider: string }): ServiceRef<T> {
  return Object.freeze({ id: options.id, provider: options.provider });
}

/** A service a module consumes: required (the module does not start without it) or optional. */
export interface ServiceDependency<T = unknown> {
  readonly ref: ServiceRef<T>;
  readonly optional?: boolean;
}

/** An implementation of a ref, as a module's instance hands it over. */
export interface ProvidedService<T = unknown> {
  readonly ref: ServiceRef<T>;
  readonly implementation: T;
}

export function provide<T>(ref: ServiceRef<T>, implementation: T): ProvidedService<T> {
  return { ref, implementation };
}
