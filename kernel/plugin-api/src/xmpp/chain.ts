/**
 * An onion of middleware, as koa-compose and xmpp.js compose them: each layer may act before and after the
 * next one, answer, rewrite, or stop the stanza by not calling `next`. Layers run by priority (lower
 * first) and are removed with the module that added them.
 */
export type Middleware<C> = (ctx: C, next: () => Promise<void>) => Promise<void> | void;

interface Layer<C> {
  readonly middleware: Middleware<C>;
  readonly priority: number;
  readonly owner: string;
}

export class Chain<C> {
  #layers: Layer<C>[] = [];

  constructor(readonly name: string) {}

  use(middleware: Middleware<C>, priority = 50, owner = 'kernel'): () => void {
    const layer = { middleware, priority, owner };
    this.#layers = [...this.#layers, layer].sort((a, b) => a.priority - b.priority);
    return () => {
      this.#layers = this.#layers.filter((l) => l !== layer);
    };
  }

  removeOwner(owner: string): void {
    this.#layers = this.#layers.filter((l) => l.owner !== owner);
  }

  get size(): number {
    return this.#layers.length;
  }

  /**
   * Runs the layers, then `terminal` if every layer called `next`. The dispatcher is a plain function, not
   * an async one: an async frame per layer would add a promise and up to three microtask turns per layer to
   * every stanza (a chat message crosses about twenty layers). Errors, thrown or rejected, still come out
   * as a rejected promise, and a layer that does not return a promise costs nothing to wait for.
   */
  run(ctx: C, terminal: (ctx: C) => Promise<void> | void): Promise<void> {
    const layers = this.#layers;
    let last = -1;
    const dispatch = (i: number): Promise<void> => {
      if (i <= last) return Promise.reject(new Error(`middleware of ${this.name} called next() twice`));
      last = i;
      const layer = layers[i];
      try {
        const result = layer ? layer.middleware(ctx, () => dispatch(i + 1)) : terminal(ctx);
        return result === undefined ? RESOLVED : Promise.resolve(result);
      } catch (err) {
        return Promise.reject(err);
      }
    };
    return dispatch(0);
  }
}

const RESOLVED: Promise<void> = Promise.resolve();
