/**
 * The scope set oidc-provider checks requests against. Ours changes as modules start and stop (one scope
 * per loaded command), so instead of a fixed list it gets a Set that asks the scope registry each time;
 * oidc-provider keeps a Set it is given as is.
 */
export class LiveScopes extends Set<string> {
  constructor(
    private readonly isScope: (name: string) => boolean,
    private readonly all: () => readonly string[],
  ) {
    super();
  }

  override has(name: string): boolean {
    return this.isScope(name);
  }

  override get size(): number {
    return this.all().length;
  }

  override *[Symbol.iterator](): SetIterator<string> {
    yield* this.all();
  }

  override values(): SetIterator<string> {
    return this[Symbol.iterator]();
  }

  override keys(): SetIterator<string> {
    return this[Symbol.iterator]();
  }

  override forEach(callback: (value: string, key: string, set: Set<string>) => void, thisArg?: unknown): void {
    for (const name of this.all()) callback.call(thisArg, name, name, this);
  }

  override add(): this {
    return this; // The registry is the only source; oidc-provider adds 'openid' at start, which we leave out.
  }
}
