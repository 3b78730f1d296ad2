/**
 * One change at a time per roster: a subscription state is read, decided on and written back, and two
 * stanzas for the same account (an inbound request and the owner's answer) must not interleave. Work
 * under a lock never routes stanzas to other accounts, so two rosters never wait for each other.
 */
export class AccountLocks {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(work, work);
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      // The last one out removes the entry, so idle accounts cost nothing.
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}
