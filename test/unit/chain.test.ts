/**
 * The routing chains' onion (plugin API `Chain`): its dispatcher is a plain function, not an async one, so
 * these pin down what an async dispatcher gave for free — errors always come out as a rejected promise, a
 * layer may answer synchronously, and the order and stopping rules are those of koa-compose.
 */
import { expect } from 'chai';
import { Chain } from '@service/plugin-api';

interface Ctx {
  seen: string[];
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  expect.fail('expected a rejected promise');
}

describe('the routing chains (Chain)', () => {
  it('runs layers by priority, each around the next, then the terminal', async () => {
    const chain = new Chain<Ctx>('test');
    chain.use(async (ctx, next) => {
      ctx.seen.push('b in');
      await next();
      ctx.seen.push('b out');
    }, 20);
    chain.use((ctx, next) => {
      ctx.seen.push('a');
      return next();
    }, 10);
    const ctx: Ctx = { seen: [] };
    await chain.run(ctx, (c) => {
      c.seen.push('terminal');
    });
    expect(ctx.seen).to.deep.equal(['a', 'b in', 'terminal', 'b out']);
  });

  it('stops where a layer does not call next, synchronously or not', async () => {
    for (const stop of [() => undefined, async () => undefined]) {
      const chain = new Chain<Ctx>('test');
      chain.use((ctx) => {
        ctx.seen.push('stopper');
        return stop();
      });
      chain.use((ctx, next) => {
        ctx.seen.push('never');
        return next();
      }, 60);
      const ctx: Ctx = { seen: [] };
      await chain.run(ctx, (c) => {
        c.seen.push('terminal');
      });
      expect(ctx.seen).to.deep.equal(['stopper']);
    }
  });

  it('turns a layer that throws synchronously into a rejected promise, as it does a rejection', async () => {
    const chain = new Chain<Ctx>('test');
    chain.use(() => {
      throw new Error('sync failure');
    });
    let result: Promise<void> | undefined;
    expect(() => (result = chain.run({ seen: [] }, () => undefined))).not.to.throw();
    expect((await rejection(result!)).message).to.equal('sync failure');

    const later = new Chain<Ctx>('test');
    later.use(async () => {
      throw new Error('async failure');
    });
    expect((await rejection(later.run({ seen: [] }, () => undefined))).message).to.equal('async failure');
  });

  it('rejects a terminal that throws, and passes an outer layer the inner failure', async () => {
    const chain = new Chain<Ctx>('test');
    chain.use(async (ctx, next) => {
      try {
        await next();
      } catch (err) {
        ctx.seen.push(`caught ${(err as Error).message}`);
        throw err;
      }
    });
    const ctx: Ctx = { seen: [] };
    const err = await rejection(
      chain.run(ctx, () => {
        throw new Error('terminal failure');
      }),
    );
    expect(err.message).to.equal('terminal failure');
    expect(ctx.seen).to.deep.equal(['caught terminal failure']);
  });

  it('refuses next() called twice by one layer', async () => {
    const chain = new Chain<Ctx>('test');
    chain.use(async (_ctx, next) => {
      await next();
      await next();
    });
    let terminals = 0;
    const err = await rejection(chain.run({ seen: [] }, () => void terminals++));
    expect(err.message).to.equal('middleware of test called next() twice');
    expect(terminals).to.equal(1);
  });

  it('removes a layer, and every layer of an owner', async () => {
    const chain = new Chain<Ctx>('test');
    const mark = (name: string) => (ctx: Ctx, next: () => Promise<void>) => {
      ctx.seen.push(name);
      return next();
    };
    const remove = chain.use(mark('one'), 10, 'mod_a');
    chain.use(mark('two'), 20, 'mod_b');
    chain.use(mark('three'), 30, 'mod_b');
    remove();
    let ctx: Ctx = { seen: [] };
    await chain.run(ctx, () => undefined);
    expect(ctx.seen).to.deep.equal(['two', 'three']);
    chain.removeOwner('mod_b');
    ctx = { seen: [] };
    await chain.run(ctx, () => undefined);
    expect(ctx.seen).to.deep.equal([]);
    expect(chain.size).to.equal(0);
  });
});
