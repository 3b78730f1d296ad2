/**
 * One task at a time per key (an account, usually): a state read, decided on and written back is never
 * interleaved with another change of the same key, while different keys run freely. A failing task does
 * not block the ones after it. The last task of a key removes its entry, so idle keys cost nothing.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Keys with work queued or running (for tests and diagnostics). */
  get size(): number {
    return this.#tails.size;
  }
}
