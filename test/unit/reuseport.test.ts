/**
 * @service/reuseport: listening sockets with SO_REUSEPORT, which a worker of the server opens for its XMPP
 * listener. Two sockets on one port both accept connections; a port a socket without the option holds is
 * refused; a bad address or port is refused with a code that names it; '::' takes IPv4 clients too.
 */
import { expect } from 'chai';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { listenReusePort } from '@service/reuseport';
import { freePort } from '../support/process.js';

/** A net.Server on descriptor `fd` that counts the connections it accepts. */
async function serverOn(fd: number): Promise<{ server: Server; accepted: () => number }> {
  let accepted = 0;
  const server = createServer((socket: Socket) => {
    accepted++;
    socket.end();
  });
  await new Promise<void>((resolve) => server.listen({ fd }, () => resolve()));
  return { server, accepted: () => accepted };
}

function connectOnce(port: number, host = '127.0.0.1'): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    socket.on('error', reject);
    socket.on('close', () => resolve());
    socket.resume();
  });
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
  return undefined;
}

describe('@service/reuseport: listening sockets with SO_REUSEPORT', function () {
  before(function () {
    if (!listenReusePort) this.skip();
  });

  it('opens two sockets on one port, and connections reach both', async () => {
    const port = await freePort();
    const a = await serverOn(listenReusePort!('127.0.0.1', port, 64));
    const b = await serverOn(listenReusePort!('127.0.0.1', port, 64));
    try {
      for (let i = 0; i < 64; i++) await connectOnce(port);
      expect(a.accepted() + b.accepted()).to.equal(64);
      // Spread by a hash of the client's port: each gets some of 64 (the odds of one getting none are 2^-63).
      expect(a.accepted()).to.be.greaterThan(0);
      expect(b.accepted()).to.be.greaterThan(0);
    } finally {
      a.server.close();
      b.server.close();
    }
  });

  it('is refused a port that a socket without the option holds (EADDRINUSE)', async () => {
    const port = await freePort();
    const plain = createServer();
    await new Promise<void>((resolve) => plain.listen(port, '127.0.0.1', () => resolve()));
    try {
      expect(codeOf(() => listenReusePort!('127.0.0.1', port, 64))).to.equal('EADDRINUSE');
    } finally {
      plain.close();
    }
  });

  it('refuses an address that is not numeric, a port out of range and a backlog below 1 (EINVAL)', () => {
    expect(codeOf(() => listenReusePort!('localhost', 5222, 64))).to.equal('EINVAL');
    expect(codeOf(() => listenReusePort!('127.0.0.1', 0, 64))).to.equal('EINVAL');
    expect(codeOf(() => listenReusePort!('127.0.0.1', 70000, 64))).to.equal('EINVAL');
    expect(codeOf(() => listenReusePort!('127.0.0.1', 5222, 0))).to.equal('EINVAL');
  });

  it("takes IPv4 clients on '::' (both families, as Node listens there)", async function () {
    const port = await freePort();
    let fd: number;
    try {
      fd = listenReusePort!('::', port, 64);
    } catch (err) {
      // A host without IPv6: the server falls back to 0.0.0.0 there.
      if ((err as NodeJS.ErrnoException).code === 'EAFNOSUPPORT' || (err as NodeJS.ErrnoException).code === 'EADDRNOTAVAIL') this.skip();
      throw err;
    }
    const s = await serverOn(fd);
    try {
      await connectOnce(port, '127.0.0.1');
      expect(s.accepted()).to.equal(1);
    } finally {
      s.server.close();
    }
  });
});
