/**
 * The token bucket of kernel/src/xmpp/c2s/shaper.ts on its own, where exact timings matter: it pauses reading
 * only when the bytes read leave it in debt, for the time the debt takes to refill; a new shaper while paused
 * reschedules the pause at the new rate (or ends it), `none` ends it at once, and a closed connection is never
 * resumed. The socket is a recorder of pause/resume calls.
 */
import { expect } from 'chai';
import { Shaper, reshape } from '../../kernel/src/xmpp/c2s/shaper.js';

function recorder() {
  const calls: Array<{ call: 'pause' | 'resume'; at: number }> = [];
  const start = performance.now();
  return {
    calls,
    control: {
      pause: () => calls.push({ call: 'pause', at: performance.now() - start }),
      resume: () => calls.push({ call: 'resume', at: performance.now() - start }),
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('shaper token bucket', () => {
  it('lets a burst through, then pauses for the time the debt takes to refill', async () => {
    const { calls, control } = recorder();
    const shaper = new Shaper({ rate: 10_000, burst: 5_000 }, control);
    shaper.received(5_000);
    expect(calls, 'within the burst').to.deep.equal([]);
    shaper.received(2_000);
    expect(shaper.paused).to.equal(true);
    await sleep(350);
    expect(calls.map((c) => c.call)).to.deep.equal(['pause', 'resume']);
    // 2000 bytes of debt at 10000 bytes/s: 200 ms.
    expect(calls[1]!.at - calls[0]!.at).to.be.within(190, 320);
    expect(shaper.paused).to.equal(false);
  });

  it('reschedules a pause at a new rate, ends it for none, and never resumes a closed connection', async () => {
    const slow = recorder();
    const shaper = new Shaper({ rate: 1_000, burst: 1_000 }, slow.control);
    shaper.received(3_000);
    expect(shaper.paused).to.equal(true);
    // 2000 bytes of debt: 2 s at 1000 bytes/s, 20 ms at 100000.
    expect(reshape(shaper, { rate: 100_000, burst: 100_000 }, slow.control)).to.equal(shaper);
    await sleep(150);
    expect(slow.calls.map((c) => c.call)).to.deep.equal(['pause', 'resume']);

    const none = recorder();
    const other = new Shaper({ rate: 1_000, burst: 1_000 }, none.control);
    other.received(5_000);
    expect(reshape(other, undefined, none.control), 'no shaper any more').to.equal(undefined);
    expect(none.calls.map((c) => c.call)).to.deep.equal(['pause', 'resume']);

    const closed = recorder();
    const gone = new Shaper({ rate: 1_000, burst: 1_000 }, closed.control);
    gone.received(1_200);
    gone.dispose();
    await sleep(300);
    expect(closed.calls.map((c) => c.call)).to.deep.equal(['pause']);
  });

  it('refills while idle, but never beyond the burst', async () => {
    const { calls, control } = recorder();
    const shaper = new Shaper({ rate: 100_000, burst: 2_000 }, control);
    shaper.received(2_000);
    await sleep(100);
    // 10000 bytes would have refilled in 100 ms; the bucket holds 2000.
    shaper.received(2_000);
    expect(calls).to.deep.equal([]);
    shaper.received(1_500);
    expect(shaper.paused).to.equal(true);
    shaper.stop();
  });
});
