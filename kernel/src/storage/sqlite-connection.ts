/**
 * SQLite's one connection, lent to one query or transaction at a time by a plain queue instead of knex's pool.
 *
 * The pool (tarn) is there for drivers with many connections. For each acquisition it builds a timed pending
 * operation: five promises, event handlers and a timer set and cleared, a third of what a look-up by primary key
 * costs through knex. SQLite has one connection here (better-sqlite3 is synchronous: a second would add lock
 * contention, not throughput), so lending it needs a flag and a queue. The pool still creates it (its afterCreate
 * hook sets the pragmas and the statement cache) and gets it back when knex is destroyed, so knex's own shutdown
 * is unchanged. Waiters are served in order, as the pool served them; a transaction holds the connection until it
 * ends, as before.
 */
import type { Knex } from 'knex';

/** The part of knex's client this file replaces. */
interface LendingClient {
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<void>;
  destroy(callback?: (err?: Error) => void): Promise<void>;
  /** The dialect's stream of a query's rows (knex's SQLite dialect reads them all, then writes them to the stream). */
  _stream(connection: unknown, query: unknown, stream: unknown, options: unknown): unknown;
}

/** Makes a SQLite knex instance lend its one connection without the pool's per-acquisition machinery. */
export function lentConnection(knex: Knex): Knex {
  const client = knex.client as LendingClient;
  const fromPool = client.acquireConnection.bind(client);
  const toPool = client.releaseConnection.bind(client);
  const destroy = client.destroy.bind(client);
  /** The connection, once the pool has created it (a failed creation is not kept: the next acquisition retries). */
  let connection: Promise<unknown> | undefined;
  let lent = false;
  /** A stream holds the lend: knex releases it twice, when the query ends and when the stream closes. */
  let streamed = false;
  let destroyed = false;
  /** Called when the connection is no longer lent (for destroy, which waits for the query or transaction holding it). */
  let onFree: (() => void) | undefined;
  const waiting: Array<{ resolve: (connection: unknown) => void; reject: (err: Error) => void }> = [];

  const take = (): Promise<unknown> => {
    connection ??= fromPool().catch((err: unknown) => {
      connection = undefined;
      throw err;
    });
    return connection;
  };
  client.acquireConnection = function () {
    if (destroyed) return Promise.reject(new Error('Unable to acquire a connection'));
    if (!lent) {
      lent = true;
      return take().catch((err: unknown) => {
        handOn();
        throw err;
      });
    }
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };
  /** The connection goes to the next waiter, or becomes free. */
  const handOn = () => {
    const next = waiting.shift();
    if (!next) {
      lent = false;
      onFree?.();
      return;
    }
    take().then(next.resolve, (err: Error) => {
      next.reject(err);
      handOn();
    });
  };
  // The pool ignored a release of what it had not lent; here the second of a stream's two releases would hand the
  // connection to a second holder while the first one's successor still holds it. So a stream's first release is
  // passed over, in whichever order the two come, and a release while nothing is lent does nothing.
  const stream = client._stream.bind(client);
  client._stream = function (connection, query, rows, options) {
    streamed = true;
    return stream(connection, query, rows, options);
  };
  client.releaseConnection = function () {
    if (streamed) streamed = false;
    else if (lent) handOn();
    return Promise.resolve();
  };
  client.destroy = async function (callback?: (err?: Error) => void) {
    destroyed = true;
    // As the pool did: what holds the connection finishes, what waits for it is refused.
    for (const waiter of waiting.splice(0)) waiter.reject(new Error('Unable to acquire a connection: the database is closing'));
    if (lent) await new Promise<void>((resolve) => (onFree = resolve));
    const held = connection && (await connection.catch(() => undefined));
    if (held !== undefined) await toPool(held);
    return destroy(callback);
  };
  return knex;
}
