/**
 * SQLite queries that let the event loop turn during a long run of them.
 *
 * better-sqlite3 answers at once, and knex hands the answer back as a resolved promise: a loop of awaited
 * queries (an import, a purge, a roster batch of thousands of items) runs as one chain of microtasks, and
 * the event loop — every client, every API call — waits until the chain ends, a second or more for a big
 * admin job. Here a query (or a transaction) that takes the connection more than TURN_MS after the first one
 * of the same turn of the event loop first waits for the next turn. The first of a turn marks it by
 * scheduling a setImmediate, which runs only once the loop turns; a server answering requests never waits
 * (each turn's queries are few), and a long job gives way every TURN_MS. It is the pool's connection
 * acquisition that waits, which every query outside a transaction and every transaction's start goes
 * through; the queries inside a transaction run on the connection it holds, without waiting.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Knex } from 'knex';

/** The longest a chain of queries holds the event loop before it waits a turn. */
const TURN_MS = 20;

interface PoolClient {
  acquireConnection(): Promise<unknown>;
}

/** Makes a SQLite knex instance's queries give the event loop a turn every TURN_MS of a long chain. */
export function turnTakingQueries(knex: Knex): Knex {
  const client = knex.client as PoolClient;
  const acquire = client.acquireConnection;
  /** When the first query of the current turn ran; undefined once the loop has turned since. */
  let turnStarted: number | undefined;
  const turned = () => {
    turnStarted = undefined;
  };
  client.acquireConnection = function (this: PoolClient) {
    const now = performance.now();
    if (turnStarted === undefined) {
      turnStarted = now;
      setImmediate(turned);
    } else if (now - turnStarted >= TURN_MS) {
      return nextTurn().then(() => acquire.call(this));
    }
    return acquire.call(this);
  };
  return knex;
}
