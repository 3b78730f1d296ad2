/**
 * Makes `instanceof` work across copies of the kernel.
 *
 * A plugin installed with its own copy of this package, or a test runner that loads the kernel both as
 * CommonJS and as an ES module, ends up with two `StanzaError` classes: a module throws one, the router
 * checks for the other, and a plain `instanceof` says no. Branded classes carry a registry symbol
 * (`Symbol.for`, shared by every copy in the process), and `instanceof` on the class itself checks it.
 * Subclasses keep the ordinary prototype check, so `instanceof SubClass` still means what it says.
 */
export function brand(cls: abstract new (...args: never[]) => object, name: string): void {
  const mark = Symbol.for(`service.kernel.${name}`);
  Object.defineProperty(cls.prototype, mark, { value: true });
  Object.defineProperty(cls, Symbol.hasInstance, {
    value(this: unknown, value: unknown): boolean {
      if (typeof this === 'function' && Function.prototype[Symbol.hasInstance].call(this, value)) return true;
      return this === cls && typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[mark] === true;
    },
  });
}
