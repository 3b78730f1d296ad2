/**
 * HookBus.run: handlers in priority order, whether they answer at once or with a promise (only promises and
 * other thenables are awaited), HOOK_STOP ending the run either way, and a failure ending it as a rejection.
 */
import { expect } from 'chai';
import { HOOK_STOP, HookBus } from '../../kernel/src/hooks/hooks.js';

describe('HookBus', () => {
  it('runs sync and async handlers in priority order, waiting for each that returns a promise', async () => {
    const bus = new HookBus();
    const order: string[] = [];
    bus.add('register_user', () => void order.push('sync 60'), 60);
    bus.add('register_user', async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      order.push('async 40');
    }, 40);
    bus.add('register_user', () => void order.push('sync 50'), 50);
    await bus.run('register_user', 'ann', 'localhost');
    expect(order).to.deep.equal(['async 40', 'sync 50', 'sync 60']);
  });

  it('waits for a thenable that is not a promise (a query builder runs only when awaited)', async () => {
    const bus = new HookBus();
    const order: string[] = [];
    const builder = { then: (resolve: (v: undefined) => void) => setTimeout(() => (order.push('builder ran'), resolve(undefined)), 10) };
    bus.add('register_user', (() => builder) as never, 10);
    bus.add('register_user', () => void order.push('next'), 20);
    await bus.run('register_user', 'ann', 'localhost');
    expect(order).to.deep.equal(['builder ran', 'next']);
  });

  it('stops at HOOK_STOP, returned at once or through a promise', async () => {
    for (const stop of [() => HOOK_STOP, async () => HOOK_STOP]) {
      const bus = new HookBus();
      const ran: string[] = [];
      bus.add('register_user', () => void ran.push('first'), 10);
      bus.add('register_user', stop as never, 20);
      bus.add('register_user', () => void ran.push('after the stop'), 30);
      await bus.run('register_user', 'ann', 'localhost');
      expect(ran).to.deep.equal(['first']);
    }
  });

  it('rejects with a handler\'s error, thrown at once or rejected, and runs nothing after it', async () => {
    for (const fail of [() => { throw new Error('refused'); }, async () => { throw new Error('refused'); }]) {
      const bus = new HookBus();
      let after = false;
      bus.add('register_user', fail as never, 10);
      bus.add('register_user', () => void (after = true), 20);
      const outcome = bus.run('register_user', 'ann', 'localhost');
      expect(outcome).to.be.instanceOf(Promise);
      const error = await outcome.then(() => undefined, (err: Error) => err);
      expect(error?.message).to.equal('refused');
      expect(after).to.equal(false);
    }
  });
});
