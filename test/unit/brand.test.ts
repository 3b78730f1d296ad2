import { expect } from 'chai';
import { brand } from '../../kernel/src/util/brand.js';

describe('branded classes', () => {
  class Failure extends Error {}
  brand(Failure, 'TestFailure');
  class Special extends Failure {}
  /** Another copy of the same class, as a second copy of the kernel would define it. */
  class FailureCopy extends Error {}
  brand(FailureCopy, 'TestFailure');

  it('recognizes an instance made by another copy of the class', () => {
    expect(new FailureCopy()).to.be.instanceOf(Failure);
    expect(new Failure()).to.be.instanceOf(FailureCopy);
  });

  it('keeps the ordinary check for subclasses and unrelated values', () => {
    expect(new Special()).to.be.instanceOf(Failure);
    expect(new Failure()).not.to.be.instanceOf(Special);
    expect(new Error()).not.to.be.instanceOf(Failure);
    expect(null).not.to.be.instanceOf(Failure);
    expect({}).not.to.be.instanceOf(Failure);
  });
});
