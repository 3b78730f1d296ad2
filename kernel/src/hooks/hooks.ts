/**
 * The hook bus (the hook names, their arguments and HOOK_STOP are the plugin API's): handlers in priority
 * order, tagged by owner so that a module that stops takes its handlers with it.
 */
import { HOOK_STOP, type HookHandler, type HookMap, type HookName, type HookResult } from '@service/plugin-api';

export { HOOK_STOP, type HookHandler, type HookMap, type HookName, type HookRegistration, type HookResult } from '@service/plugin-api';

interface Entry {
  handler: (...args: unknown[]) => HookResult | Promise<HookResult>;
  priority: number;
  owner: string;
}

export class HookBus {
  readonly #hooks = new Map<string, Entry[]>();

  add<N extends HookName>(hook: N, handler: HookHandler<N>, priority = 50, owner = 'kernel'): () => void {
    const list = this.#hooks.get(hook) ?? [];
    const entry: Entry = { handler: handler as Entry['handler'], priority, owner };
    list.push(entry);
    // Stable: equal priorities keep their registration order.
    list.sort((a, b) => a.priority - b.priority);
    this.#hooks.set(hook, list);
    return () => {
      const current = this.#hooks.get(hook);
      if (current) this.#hooks.set(hook, current.filter((e) => e !== entry));
    };
  }

  /** Removes every handler registered by `owner` (a module that stops). */
  removeOwner(owner: string): void {
    for (const [hook, list] of this.#hooks) this.#hooks.set(hook, list.filter((e) => e.owner !== owner));
  }

  /** Runs the handlers in priority order; a handler's failure propagates and ends the run. */
  async run<N extends HookName>(hook: N, ...args: HookMap[N]): Promise<void> {
    const list = this.#hooks.get(hook);
    if (!list) return;
    for (const entry of [...list]) {
      // Most handlers answer at once (a cache, a counter): waiting only for those that return a promise spares
      // a turn of the microtask queue per handler on hooks run for every login and request.
      const result = entry.handler(...args);
      if ((isThenable(result) ? await result : result) === HOOK_STOP) return;
    }
  }

  count(hook: HookName): number {
    return this.#hooks.get(hook)?.length ?? 0;
  }
}

/** A promise, or anything awaiting would call (a knex query builder runs only then). */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}
