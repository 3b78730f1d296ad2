/**
 * What a promise that must fail rejects with, checked to be an instance of `kind` (Error by default).
 */
import { expect } from 'chai';

export async function rejectionOf<E extends Error = Error>(promise: Promise<unknown>, kind: abstract new (...args: any[]) => E = Error as any): Promise<E> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(kind);
    return err as E;
  }
  return expect.fail(`expected a rejection with ${kind.name}`);
}
