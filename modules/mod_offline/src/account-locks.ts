/**
 * One task at a time per account: storing a message and draining the queue to a session never
 * interleave, so a message stored while a client comes online is not missed, and two sessions coming
 * online together do not both receive the queue.
 */
export class AccountLocks {
  readonly #tails = new Map<string, Promise<void>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = previous.then(() => new Promise<void>((resolve) => (release = resolve)));
    this.#tails.set(key, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      // The last task of a key removes it, so idle accounts hold no memory.
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
