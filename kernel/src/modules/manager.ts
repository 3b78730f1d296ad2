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
import { scopedHook, scopedMiddleware } from './host-scope.js';
import { ModuleServiceRegistry } from './service-registry.js';
import type { KernelServices } from './services.js';

/** A module to run: once for the whole server, or once for a virtual host (a per-host module). */
export interface DesiredInstance {
  readonly module: string;
  readonly host?: string;
  readonly options: Readonly<Record<string, unknown>>;
}

/** What should run, by instance key (`mod_x`, or `mod_x@host` for a per-host module). */
export type DesiredModules = ReadonlyMap<string, DesiredInstance>;

/** The key of an instance, which is also the owner of everything it registers. */
export function instanceKey(module: string, host?: string): string {
  return host ? `${module}@${host}` : module;
}

interface Running extends DesiredInstance {
  readonly definition: ModuleDefinition;
  options: Readonly<Record<string, unknown>>;
  readonly instance: ModuleInstance;
}

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

  /** Whether the module runs, for the whole server or on some host. */
  isRunning(module: string): boolean {
    return [...this.#running.values()].some((r) => r.module === module);
  }

  /** The running instances of a module: its key for the whole server, or one per host. */
  instancesOf(module: string): Array<{ key: string; host?: string }> {
    return [...this.#running].filter(([, r]) => r.module === module).map(([key, r]) => ({ key, ...(r.host ? { host: r.host } : {}) }));
  }

  definitionOf(module: string): ModuleDefinition | undefined {
    return [...this.#running.values()].find((r) => r.module === module)?.definition;
  }

  /**
   * Brings the running set to `desired`: stops modules no longer wanted, reloads or restarts those whose
   * options changed (and the modules that depend on a restarted one), starts new ones. Every definition and
   * dependency is checked before anything is stopped. `restart` names running instances to restart even
   * when nothing changed (restart_module).
   */
  async apply(desired: DesiredModules, options: { restart?: Iterable<string> } = {}): Promise<void> {
    const definitions = new Map<string, ModuleDefinition>();
    for (const { module } of desired.values()) if (!definitions.has(module)) definitions.set(module, await this.catalog.definition(module));
    const order = startOrder(desired, definitions);

    const restart = new Set<string>([...(options.restart ?? [])].filter((key) => this.#running.has(key) && desired.has(key)));
    const reload: string[] = [];
    for (const [key, running] of this.#running) {
      const wanted = desired.get(key);
      if (!wanted) continue;
      const changedCode = definitions.get(running.module) !== running.definition;
      const changedOptions = !isDeepStrictEqual(wanted.options, running.options);
      if (changedCode || (changedOptions && !running.instance.reload)) restart.add(key);
      else if (changedOptions) reload.push(key);
    }
    // A module that depends on one that stops or restarts, or consumes a service of it, may hold what it
    // got from it (a service's object, a claim, a listener): restart it too. So does one whose optional
    // dependency arrives now: what it set up at start (a claimed namespace) was set up without it.
    const arriving = (key: string) => desired.has(key) && !this.#running.has(key);
    let grew = true;
    while (grew) {
      grew = false;
      for (const [key, running] of this.#running) {
        if (restart.has(key) || !desired.has(key)) continue;
        const deps = dependenciesOf(running.definition).map((d) => dependencyKey(d.module, running.host, definitions));
        if (deps.some((dep) => dep !== undefined && (restart.has(dep) || arriving(dep) || (this.#running.has(dep) && !desired.has(dep))))) {
          restart.add(key);
          grew = true;
        }
      }
    }
    for (const key of [...this.#order].reverse()) {
      if (!desired.has(key) || restart.has(key)) await this.#stop(key);
    }
    for (const key of reload) {
      const running = this.#running.get(key)!;
      const next = desired.get(key)!.options;
      await running.instance.reload!(next, running.options);
      running.options = next;
      this.logger.info({ module: running.module, host: running.host }, 'module %s reloaded with new options', key);
    }
    for (const key of order) {
      const wanted = desired.get(key)!;
      if (!this.#running.has(key)) await this.#start(key, wanted, definitions.get(wanted.module)!);
    }
  }

  async stopAll(): Promise<void> {
    for (const name of [...this.#order].reverse()) await this.#stop(name);
  }

  async #start(key: string, wanted: DesiredInstance, definition: ModuleDefinition): Promise<void> {
    const { module: name, host, options } = wanted;
    const { storage, commands, hooks, http, scopes } = this.services;
    const logger = this.logger.child(host ? { module: name, host } : { module: name });
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
        return host ? [host] : services.config().hosts;
      },
      ...(host ? { host } : {}),
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
      for (const decl of declared) commands.registry.register(decl, handlerOf(decl)!, key);
      for (const h of instance.hooks ?? []) {
        const hook = host ? scopedHook(h, host) : h;
        hooks.add(hook.hook, hook.handler as never, hook.priority, key);
      }
      for (const [handlerName, handler] of Object.entries(instance.httpHandlers ?? {})) http.register(handlerName, handler, key);
      for (const scopeDecl of instance.scopes ?? []) scopes.register(scopeDecl, key);
      if (instance.xmpp) registerXmpp(this.services, instance.xmpp, key, host);
      for (const channel of instance.channels ?? []) this.services.processes.register(channel, key);
      if (instance.nodeTransport) this.services.nodes.attach(instance.nodeTransport, key);
      if (instance.portability) this.services.portability.register(instance.portability, key, host);
      if (instance.hostPortability) this.services.portability.registerHostLevel(instance.hostPortability, key, host);
      this.#provide(key, definition, instance);
      this.#serveListenerKinds(key, definition, instance);
    } catch (err) {
      this.#unregister(key);
      await this.services.listenerKinds.removeOwner(key);
      await Promise.resolve(instance.stop?.()).catch(() => {});
      if (err instanceof ModuleError) throw err;
      throw new ModuleError('MODULE_REGISTRATION_FAILED', name, (err as Error).message, { cause: err });
    }
    this.#running.set(key, { ...wanted, definition, options, instance });
    this.#order.push(key);
    logger.info({ version: definition.version, commands: definition.commands?.length ?? 0 }, 'module %s %s started', key, definition.version);
  }

  async #stop(key: string): Promise<void> {
    const running = this.#running.get(key);
    if (!running) return;
    this.#unregister(key);
    // Its listeners hold its handlers: closed before it stops.
    await this.services.listenerKinds.removeOwner(key);
    this.#running.delete(key);
    this.#order = this.#order.filter((n) => n !== key);
    try {
      await running.instance.stop?.();
    } catch (err) {
      this.logger.error({ err, module: running.module, host: running.host }, 'module %s failed to stop cleanly', key);
    }
    this.logger.info({ module: running.module, host: running.host }, 'module %s stopped', key);
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
    this.services.processes.removeOwner(name);
    this.services.nodes.removeOwner(name);
    this.services.portability.removeOwner(name);
  }
}

/** `host`: a per-host instance's, whose registrations apply to that host only (see host-scope.ts). */
function registerXmpp(services: KernelServices, registrations: XmppRegistrations, owner: string, host?: string): void {
  const { xmpp } = services;
  const chains = xmpp.router.chains;
  if (host) {
    const global = (['sasl', 'domains', 'remoteRoutes', 'sessionKeepers', 'sessionSources', 'sessionCarriers', 'sessionMovers'] as const).filter((k) => (registrations[k]?.length ?? 0) > 0);
    if (global.length) throw new Error(`it runs per host, so it cannot register ${global.join(', ')}: those belong to the whole server`);
  }
  for (const iq of registrations.iq ?? []) xmpp.iq.register(iq, owner, host);
  for (const registered of registrations.middleware ?? []) {
    const layer = host ? scopedMiddleware(registered, host) : registered;
    const chain = { stream_in: chains.streamIn, user_send: chains.userSend, deliver: chains.deliver, offline: chains.offline, user_receive: chains.userReceive }[layer.chain];
    chain.use(layer.handler as never, layer.priority, owner);
  }
  for (const feature of registrations.features ?? []) xmpp.features.register(feature, owner, host);
  for (const disco of registrations.disco ?? []) xmpp.disco.register(disco, owner, host);
  for (const { mechanism, rank } of registrations.sasl ?? []) xmpp.sasl.register(mechanism, owner, rank ?? -1);
  for (const { domain, handler } of registrations.domains ?? []) xmpp.router.registerDomain(domain, handler, owner);
  for (const route of registrations.remoteRoutes ?? []) xmpp.router.registerRemoteRoute(route, owner);
  for (const keeper of registrations.sessionKeepers ?? []) xmpp.addSessionKeeper(keeper, owner);
  for (const source of registrations.sessionSources ?? []) xmpp.addSessionSource(source, owner);
  for (const carrier of registrations.sessionCarriers ?? []) xmpp.addSessionCarrier(carrier, owner);
  for (const mover of registrations.sessionMovers ?? []) xmpp.addSessionMover(mover, owner);
}

/**
 * The instance a dependency means for a dependent on `host` (undefined: the whole server): the dependency's
 * own instance on that host when it runs per host, else its one instance; undefined when a module that runs
 * for the whole server would depend on a per-host one.
 */
function dependencyKey(module: string, host: string | undefined, definitions: ReadonlyMap<string, ModuleDefinition>): string | undefined {
  if (!definitions.get(module)?.perHost) return module;
  return host ? instanceKey(module, host) : undefined;
}

/** Dependencies first; a missing hard dependency, a wrong version or a cycle is an error naming the modules. */
export function startOrder(desired: DesiredModules, definitions: ReadonlyMap<string, ModuleDefinition>): string[] {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (key: string, path: string[]) => {
    if (state.get(key) === 'done') return;
    const { module, host } = desired.get(key)!;
    if (state.get(key) === 'visiting') {
      throw new ModuleError('MODULE_DEPENDENCY_CYCLE', module, `dependency cycle: ${[...path, key].join(' -> ')}`);
    }
    state.set(key, 'visiting');
    for (const dep of dependenciesOf(definitions.get(module)!)) {
      const found = definitions.get(dep.module);
      const depKey = found ? dependencyKey(dep.module, host, definitions) : undefined;
      if (found && depKey === undefined) {
        throw new ModuleError('MODULE_INVALID', module, `it runs for the whole server and depends on ${dep.module}, which runs per host`);
      }
      if (!found || !desired.has(depKey!)) {
        if (dep.optional) continue;
        const what = dep.service ? `it uses the service ${dep.service} of ${dep.module}` : `it depends on ${dep.module}`;
        const where = found && host ? ` on ${host}` : '';
        throw new ModuleError('MODULE_DEPENDENCY_MISSING', module, `${what}, which is not enabled${where}: add ${dep.module} to modules`);
      }
      if (dep.version && !semver.satisfies(found.version, dep.version, { includePrerelease: true })) {
        throw new ModuleError('MODULE_DEPENDENCY_VERSION', module, `it needs ${dep.module} ${dep.version}, but ${dep.module} is ${found.version}`);
      }
      visit(depKey!, [...path, key]);
    }
    state.set(key, 'done');
    order.push(key);
  };
  for (const key of desired.keys()) visit(key, []);
  return order;
}
