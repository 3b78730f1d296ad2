/**
 * Redis connections of a node: one for commands, one for blocking reads of the node's inbox (a blocked
 * connection can do nothing else). ioredis reconnects with backoff; every state change is logged, so an
 * operator sees a lost Redis and its return.
 */
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { Logger } from '@service/plugin-api';

const require = createRequire(import.meta.url);

/** `node`: this node's name, in the connection's name (CLIENT LIST shows which node holds which connection). */
export function openRedis(url: string, role: string, node: string, logger: Logger): Redis {
  // ioredis (21 MB) is loaded when a cluster starts: every server reads this module's declarations, few run it.
  const { Redis } = require('ioredis') as typeof import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    // Backoff: 100 ms, 200 ms… up to 5 s between attempts, for as long as it takes.
    retryStrategy: (attempt) => Math.min(100 * 2 ** Math.min(attempt - 1, 6), 5000),
    maxRetriesPerRequest: role === 'inbox' ? null : 3,
    enableOfflineQueue: true,
    // Redis allows no spaces or newlines in a connection name; node names have neither (service@host).
    connectionName: `service-${role}-${node.replace(/[^\x21-\x7e]/g, '_')}`,
    // Commands issued in one turn of the event loop go out in one write: a burst of stanzas for other
    // nodes costs one round trip, not one each (the blocking inbox reader has nothing to batch).
    enableAutoPipelining: role === 'commands',
  });
  let state = 'connecting';
  const change = (next: string, level: 'info' | 'warn' | 'notice', detail?: string) => {
    if (next === state) return;
    state = next;
    logger[level]({ redis: role, state: next }, 'redis (%s): %s%s', role, next, detail ? ` (${detail})` : '');
  };
  redis.on('ready', () => change('ready', 'notice'));
  redis.on('close', () => change('disconnected', 'warn'));
  redis.on('reconnecting', (ms: number) => change('reconnecting', 'warn', `next attempt in ${ms} ms`));
  redis.on('error', (err: Error) => logger.debug({ redis: role, err: err.message }, 'redis (%s) error: %s', role, err.message));
  redis.on('end', () => change('closed', 'info'));
  return redis;
}
