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

  /** Runs the layers, then `terminal` if every layer called `next`. */
  run(ctx: C, terminal: (ctx: C) => Promise<void> | void): Promise<void> {
    const layers = this.#layers;
    let last = -1;
    const dispatch = async (i: number): Promise<void> => {
      if (i <= last) throw new Error(`middleware of ${this.name} called next() twice`);
      last = i;
      const layer = layers[i];
      if (!layer) return terminal(ctx);
      return layer.middleware(ctx, () => dispatch(i + 1));
    };
    return dispatch(0);
  }
}
