/**
 * Starts, stops and reloads modules so that the running set matches the configuration. Dependencies (the
 * modules a module depends on, and the providers of the services it consumes) start first and stop last,
 * checked before anything starts: missing, of a version outside the range asked, or in a cycle. Everything a
 * module registered (commands, hooks, request handlers, scopes, services) is removed when it stops, so
 * stopping and starting it again is clean.
 */
import type { AwilixContainer } from 'awilix';
import semver from 'semver';
import type { ServiceDependency, ServiceRef } from '@service/plugin-api';
import { isDeepStrictEqual } from 'node:util';
import type { CommandDecl, CommandHandler } from '@service/plugin-api';
import type { Logger } from '../log/logger.js';
import type { ModuleCatalog } from './catalog.js';
import type { ModuleContext, ModuleDefinition, ModuleDependency, ModuleInstance, XmppRegistrations } from '@service/plugin-api';
import { ModuleError } from './errors.js';
import { ModuleServiceRegistry } from './service-registry.js';
import type { KernelServices } from './services.js';

interface Running {
  readonly definition: ModuleDefinition;
  options: Readonly<Record<string, unknown>>;
  readonly instance: ModuleInstance;
}

export type DesiredModules = ReadonlyMap<string, Readonly<Record<string, unknown>>>;

function serviceDependenciesOf(def: ModuleDefinition): ServiceDependency[] {
  return (def.consumes ?? []).map((c) => ('ref' in c ? c : { ref: c as ServiceRef<unknown> }));
}

/**
 * What a module needs started before it: the modules it depends on, and the providers of the services it
 * consumes (as optional or hard as the consumption).
 */
export function dependenciesOf(def: ModuleDefinition): Array<ModuleDependency & { service?: string }> {
  const declared = (def.depends ?? []).map((d) => (typeof d === 'string' ? { module: d } : d));
  const providers = serviceDependenciesOf(def)
    .filter((s) => !declared.some((d) => d.module === s.ref.provider))
    .map((s) => ({ module: s.ref.provider, optional: s.optional, service: s.ref.id }));
  return [...declared, ...providers];
}

export class ModuleManager {
  readonly #running = new Map<string, Running>();
  /** Start order of the running modules; stopping walks it backwards. */
  #order: string[] = [];
  readonly #provided: ModuleServiceRegistry;

  constructor(
    private readonly catalog: ModuleCatalog,
    private readonly services: KernelServices,
    container: AwilixContainer,
    private readonly logger: Logger,
  ) {
    this.#provided = new ModuleServiceRegistry(container);
  }

  running(): string[] {
    return [...this.#order];
  }

  isRunning(name: string): boolean {
    return this.#running.has(name);
  }

  definitionOf(name: string): ModuleDefinition | undefined {
    return this.#running.get(name)?.definition;
  }

  /**
   * Brings the running set to `desired`: stops modules no longer wanted, reloads or restarts those whose
   * options changed (and the modules that depend on a restarted one), starts new ones. Every definition and
   * dependency is checked before anything is stopped.
   */
  async apply(desired: DesiredModules): Promise<void> {
    const definitions = new Map<string, ModuleDefinition>();
    for (const name of desired.keys()) definitions.set(name, await this.catalog.definition(name));
    const order = startOrder(definitions);

    const restart = new Set<string>();
    const reload: string[] = [];
    for (const [name, running] of this.#running) {
      if (!desired.has(name)) continue;
      const changedCode = definitions.get(name) !== running.definition;
      const changedOptions = !isDeepStrictEqual(desired.get(name), running.options);
      if (changedCode || (changedOptions && !running.instance.reload)) restart.add(name);
      else if (changedOptions) reload.push(name);
    }
    // A module that depends on one that stops or restarts, or consumes a service of it, may hold what it
    // got from it (a service's object, a claim, a listener): restart it too. So does one whose optional
    // dependency arrives now: what it set up at start (a claimed namespace) was set up without it.
    const arriving = (module: string) => desired.has(module) && !this.#running.has(module);
    let grew = true;
    while (grew) {
      grew = false;
      for (const [name, running] of this.#running) {
        if (restart.has(name) || !desired.has(name)) continue;
        if (dependenciesOf(running.definition).some((d) => restart.has(d.module) || arriving(d.module) || (this.#running.has(d.module) && !desired.has(d.module)))) {
          restart.add(name);
          grew = true;
        }
      }
    }
    for (const name of [...this.#order].reverse()) {
      if (!desired.has(name) || restart.has(name)) await this.#stop(name);
    }
    for (const name of reload) {
      const running = this.#running.get(name)!;
      const next = desired.get(name)!;
      await running.instance.reload!(next, running.options);
      running.options = next;
      this.logger.info({ module: name }, 'module %s reloaded with new options', name);
    }
    for (const name of order) {
      if (!this.#running.has(name)) await this.#start(name, definitions.get(name)!, desired.get(name)!);
    }
  }

  async stopAll(): Promise<void> {
    for (const name of [...this.#order].reverse()) await this.#stop(name);
  }

  async #start(name: string, definition: ModuleDefinition, options: Readonly<Record<string, unknown>>): Promise<void> {
    const { storage, commands, hooks, http, scopes } = this.services;
    const logger = this.logger.child({ module: name });
    const dbKind = (options.db_type as 'sql' | 'mnesia' | undefined) ?? this.services.config().default_db;
    try {
      await storage.migrate(name, definition.migrations ?? [], dbKind);
    } catch (err) {
      throw new ModuleError('MODULE_START_FAILED', name, `its tables could not be created: ${(err as Error).message}`, { cause: err });
    }
    const consumed = new Map(serviceDependenciesOf(definition).map((d) => [d.ref.id, d]));
    const services = this.services;
    const provided = this.#provided;
    const consumption = (ref: ServiceRef<unknown>) => {
      if (!consumed.has(ref.id)) throw new Error(`module ${name} asked for the service ${ref.id}, which it does not list in consumes`);
    };
    const context: ModuleContext = {
      name,
      options,
      get hosts() {
        return services.config().hosts;
      },
      logger,
      db: storage.db(dbKind),
      dbKind,
      services,
      use: <T>(ref: ServiceRef<T>): T => {
        consumption(ref);
        const implementation = provided.resolve(ref);
        if (implementation === undefined) throw new ModuleError('MODULE_SERVICE_MISSING', name, `it uses the service ${ref.id}, which no running module provides (enable ${ref.provider})`);
        return implementation;
      },
      find: <T>(ref: ServiceRef<T>): T | undefined => {
        consumption(ref);
        return provided.resolve(ref);
      },
    };
    let instance: ModuleInstance;
    try {
      instance = ((await definition.start(context)) ?? {}) as ModuleInstance;
    } catch (err) {
      if (err instanceof ModuleError) throw err;
      throw new ModuleError('MODULE_START_FAILED', name, `start failed: ${(err as Error).message}`, { cause: err });
    }
    try {
      const declared = definition.commands ?? [];
      const handlers = (instance.handlers ?? {}) as Record<string, CommandHandler<CommandDecl>>;
      // One handler per command name, or one per version under `name@vN` when versions differ.
      const handlerOf = (decl: CommandDecl) => handlers[`${decl.name}@v${decl.version ?? 0}`] ?? handlers[decl.name];
      const missing = declared.filter((d) => typeof handlerOf(d) !== 'function').map((d) => `${d.name}${d.version ? `@v${d.version}` : ''}`);
      const extra = Object.keys(handlers).filter((key) => !declared.some((d) => key === d.name || key === `${d.name}@v${d.version ?? 0}`));
      if (missing.length || extra.length) {
        throw new ModuleError(
          'MODULE_HANDLERS_MISMATCH',
          name,
          [missing.length ? `no handler for declared command(s) ${missing.join(', ')}` : '', extra.length ? `handler(s) for undeclared command(s) ${extra.join(', ')}` : '']
            .filter(Boolean)
            .join('; '),
        );
      }
      for (const decl of declared) commands.registry.register(decl, handlerOf(decl)!, name);
      for (const h of instance.hooks ?? []) hooks.add(h.hook, h.handler as never, h.priority, name);
      for (const [handlerName, handler] of Object.entries(instance.httpHandlers ?? {})) http.register(handlerName, handler, name);
      for (const scopeDecl of instance.scopes ?? []) scopes.register(scopeDecl, name);
      if (instance.xmpp) registerXmpp(this.services, instance.xmpp, name);
      this.#provide(name, definition, instance);
      this.#serveListenerKinds(name, definition, instance);
    } catch (err) {
      this.#unregister(name);
      await this.services.listenerKinds.removeOwner(name);
      await Promise.resolve(instance.stop?.()).catch(() => {});
      if (err instanceof ModuleError) throw err;
      throw new ModuleError('MODULE_REGISTRATION_FAILED', name, (err as Error).message, { cause: err });
    }
    this.#running.set(name, { definition, options, instance });
    this.#order.push(name);
    logger.info({ version: definition.version, commands: definition.commands?.length ?? 0 }, 'module %s %s started', name, definition.version);
  }

  async #stop(name: string): Promise<void> {
    const running = this.#running.get(name);
    if (!running) return;
    this.#unregister(name);
    // Its listeners hold its handlers: closed before it stops.
    await this.services.listenerKinds.removeOwner(name);
    this.#running.delete(name);
    this.#order = this.#order.filter((n) => n !== name);
    try {
      await running.instance.stop?.();
    } catch (err) {
      this.logger.error({ err, module: name }, 'module %s failed to stop cleanly', name);
    }
    this.logger.info({ module: name }, 'module %s stopped', name);
  }

  /** The services the definition lists in `provides`, one implementation each from the instance. */
  #provide(name: string, definition: ModuleDefinition, instance: ModuleInstance): void {
    const declared = definition.provides ?? [];
    const given = instance.services ?? [];
    const undeclared = given.filter((s) => !declared.some((ref) => ref.id === s.ref.id)).map((s) => s.ref.id);
    const missing = declared.filter((ref) => !given.some((s) => s.ref.id === ref.id)).map((ref) => ref.id);
    if (undeclared.length || missing.length) {
      throw new ModuleError(
        'MODULE_HANDLERS_MISMATCH',
        name,
        [missing.length ? `no implementation for provided service(s) ${missing.join(', ')}` : '', undeclared.length ? `implementation(s) of service(s) it does not list in provides: ${undeclared.join(', ')}` : '']
          .filter(Boolean)
          .join('; '),
      );
    }
    for (const { ref, implementation } of given) this.#provided.provide(ref, implementation, name);
  }

  /** The listener kinds the definition declares, one starter each from the instance. */
  #serveListenerKinds(name: string, definition: ModuleDefinition, instance: ModuleInstance): void {
    const declared = Object.keys(definition.listeners ?? {});
    const given = instance.listeners ?? {};
    const missing = declared.filter((kind) => typeof given[kind] !== 'function');
    const undeclared = Object.keys(given).filter((kind) => !declared.includes(kind));
    if (missing.length || undeclared.length) {
      throw new ModuleError(
        'MODULE_HANDLERS_MISMATCH',
        name,
        [missing.length ? `nothing opens the declared listener kind(s) ${missing.join(', ')}` : '', undeclared.length ? `it opens listener kind(s) it does not declare: ${undeclared.join(', ')}` : '']
          .filter(Boolean)
          .join('; '),
      );
    }
    for (const [kind, start] of Object.entries(given)) this.services.listenerKinds.register(kind, start, name);
  }

  #unregister(name: string): void {
    this.#provided.removeOwner(name);
    const { commands, hooks, http, scopes, xmpp } = this.services;
    commands.registry.unregisterModule(name);
    hooks.removeOwner(name);
    http.removeOwner(name);
    scopes.removeOwner(name);
    xmpp.removeOwner(name);
  }
}

function registerXmpp(services: KernelServices, registrations: XmppRegistrations, owner: string): void {
  const { xmpp } = services;
  const chains = xmpp.router.chains;
  for (const iq of registrations.iq ?? []) xmpp.iq.register(iq, owner);
  for (const layer of registrations.middleware ?? []) {
    const chain = { stream_in: chains.streamIn, user_send: chains.userSend, deliver: chains.deliver, offline: chains.offline, user_receive: chains.userReceive }[layer.chain];
    chain.use(layer.handler as never, layer.priority, owner);
  }
  for (const feature of registrations.features ?? []) xmpp.features.register(feature, owner);
  for (const disco of registrations.disco ?? []) xmpp.disco.register(disco, owner);
  for (const { mechanism, rank } of registrations.sasl ?? []) xmpp.sasl.register(mechanism, owner, rank ?? -1);
  for (const { domain, handler } of registrations.domains ?? []) xmpp.router.registerDomain(domain, handler, owner);
  for (const route of registrations.remoteRoutes ?? []) xmpp.router.registerRemoteRoute(route, owner);
  for (const keeper of registrations.sessionKeepers ?? []) xmpp.addSessionKeeper(keeper, owner);
}

/** Dependencies first; a missing hard dependency or a cycle is an error naming the modules. */
export function startOrder(definitions: ReadonlyMap<string, ModuleDefinition>): string[] {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: string[]) => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') {
      throw new ModuleError('MODULE_DEPENDENCY_CYCLE', name, `dependency cycle: ${[...path, name].join(' -> ')}`);
    }
    state.set(name, 'visiting');
    for (const dep of dependenciesOf(definitions.get(name)!)) {
      const found = definitions.get(dep.module);
      if (!found) {
        if (dep.optional) continue;
        const what = dep.service ? `it uses the service ${dep.service} of ${dep.module}` : `it depends on ${dep.module}`;
        throw new ModuleError('MODULE_DEPENDENCY_MISSING', name, `${what}, which is not enabled: add ${dep.module} to modules`);
      }
      if (dep.version && !semver.satisfies(found.version, dep.version, { includePrerelease: true })) {
        throw new ModuleError('MODULE_DEPENDENCY_VERSION', name, `it needs ${dep.module} ${dep.version}, but ${dep.module} is ${found.version}`);
      }
      visit(dep.module, [...path, name]);
    }
    state.set(name, 'done');
    order.push(name);
  };
  for (const name of definitions.keys()) visit(name, []);
  return order;
}
