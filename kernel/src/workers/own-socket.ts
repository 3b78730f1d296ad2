/**
 * A listener of a worker on a socket of its own, with SO_REUSEPORT (@service/reuseport), instead of one socket
 * the primary shares out.
 *
 * node:cluster shares a port through the primary: it accepts each connection and hands it to a worker over IPC,
 * and the worker acknowledges it. For XMPP clients, where every login is a new connection, that costs the primary
 * about 0.2 ms of CPU per connection on a 2-vCPU machine and wakes two more processes each time
 * (docs/performance.md, "Each worker accepts its own XMPP connections"). With SO_REUSEPORT every worker binds the
 * same address and the kernel spreads new connections over their sockets by a hash of the client's address and
 * port: across thousands of connections that is as even as round robin. The HTTP listeners keep the primary's
 * round robin: a few keep-alive connections carry their load, and a hash could put most of them on one worker.
 *
 * Not used (the caller listens as before) outside a worker, on port 0 (each socket would get a port of its
 * own), for an address that is not numeric, or where the addon is not built (not Linux, no compiler).
 */
import cluster from 'node:cluster';
import { isIP } from 'node:net';
import type { Server } from 'node:net';
import { listenReusePort, reusePortProblem } from '@service/reuseport';
import { lacksIpv6, listenError } from '../http/listener.js';

/** Why the workers share XMPP ports through the primary here (the addon is not loaded), or undefined. */
export const ownSocketProblem: string | undefined = listenReusePort ? undefined : (reusePortProblem ?? 'the addon is not built');

/** Node's default backlog for a listening socket. */
const BACKLOG = 511;

/**
 * net.Server's method that adopts a listening descriptor. `listen({ fd })` would ask the primary for the
 * socket in a cluster worker (it honours `exclusive` only with a port or a path); `_listen2` is what `listen`
 * calls once it has decided to listen in this process, and Node keeps it under that name for code that wraps it.
 */
interface AdoptingServer {
  _listen2(address: null, port: null, addressType: null, backlog: number, fd: number): void;
}

/**
 * Listens on a socket of this worker's own; false when that does not apply here (the caller then listens as
 * any process does). An error of the socket itself (EADDRINUSE, ...) is thrown, with the address it concerns.
 */
export async function listenOnOwnSocket(server: Server, port: number, ip: string): Promise<boolean> {
  if (!cluster.isWorker || !listenReusePort || port === 0 || isIP(ip) === 0) return false;
  let fd: number;
  try {
    fd = listenReusePort(ip, port, BACKLOG);
  } catch (err) {
    // The same fallback and error as listen(): a host without IPv6 listens on every IPv4 address instead.
    if (lacksIpv6(ip, err as NodeJS.ErrnoException)) return listenOnOwnSocket(server, port, '0.0.0.0');
    throw listenError(ip, port, err as NodeJS.ErrnoException);
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      resolve();
    });
    (server as unknown as AdoptingServer)._listen2(null, null, null, BACKLOG, fd);
  });
  return true;
}
