/**
 * RecencyMap: the size-bounded caches' map (verified credentials, token look-ups). Eviction is least recently
 * used first, where a hit counts as a move only once per `moveAfterMs` (so that a hit on every request does
 * not rebuild the map's table each time).
 */
import { expect } from 'chai';
import { RecencyMap } from '../../kernel/src/caches/recency-map.js';

describe('RecencyMap', () => {
  it('evicts the least recently used entries first', () => {
    const map = new RecencyMap<string, number>(1000);
    map.set('a', 1, 0);
    map.set('b', 2, 0);
    map.set('c', 3, 0);
    expect(map.get('a', 1000)).to.equal(1); // a moves to the back
    const evicted: string[] = [];
    map.trimTo(1, (key) => evicted.push(key));
    expect(evicted).to.deep.equal(['b', 'c']);
    expect(map.size).to.equal(1);
    expect(map.peek('a')).to.equal(1);
  });

  it('does not move an entry used again within moveAfterMs', () => {
    const map = new RecencyMap<string, number>(1000);
    map.set('a', 1, 0);
    map.set('b', 2, 0);
    expect(map.get('a', 999)).to.equal(1); // too soon: a stays first
    map.trimTo(1);
    expect(map.peek('a')).to.equal(undefined);
    expect(map.peek('b')).to.equal(2);
  });

  it('counts the time from the last move, and a set as a move', () => {
    const map = new RecencyMap<string, number>(1000);
    map.set('a', 1, 0);
    map.set('b', 2, 500);
    expect(map.get('a', 1000)).to.equal(1); // moved at 1000: order b, a
    expect(map.get('b', 1200)).to.equal(2); // set at 500, so 700 ms ago: stays
    map.trimTo(1);
    expect(map.peek('a')).to.equal(1);
    map.set('b', 3, 1300);
    expect(map.get('a', 1999)).to.equal(1); // moved at 1000: stays
    map.trimTo(1);
    expect([map.peek('a'), map.peek('b')]).to.deep.equal([undefined, 3]);
  });

  it('deletes and clears', () => {
    const map = new RecencyMap<string, number>();
    map.set('a', 1, 0);
    map.set('b', 2, 0);
    expect(map.delete('a')).to.equal(true);
    expect(map.delete('a')).to.equal(false);
    expect(map.get('a', 5000)).to.equal(undefined);
    map.clear();
    expect(map.size).to.equal(0);
  });
});
