/**
 * Connections placed on one worker of a server process with `workers:`. Each worker accepts XMPP clients on a
 * socket of its own and the kernel picks one by a hash of the client's port (or, where that is not built, the
 * primary hands connections out in turn), so a test logs in until the server's log says the login landed on
 * the worker it wants (each worker logs `authenticated` with its number). Shared by the tests that need a
 * session on each worker.
 */
import { expect } from 'chai';
import { RawXmppPeer } from './raw-xmpp.js';
import { openConfig, type ServerProcess } from './process.js';
import type { RawConfig } from './server.js';
import { TLS_FIXTURE, loginTo, type Client } from './xmpp.js';

/** A server of `workers: 2` with a c2s listener on `c2s` (the test CA's certificate), and `extra` on top. */
export function twoWorkersConfig(port: number, c2s: number, extra: RawConfig = {}): RawConfig {
  const config = openConfig(port);
  (config.listen as unknown[]).push({ port: c2s, ip: '127.0.0.1', module: 'service_c2s' });
  return { ...config, workers: 2, certfiles: [TLS_FIXTURE], ...extra };
}

/** Waits (20 s at most) until the primary says both workers serve. */
export async function bothWorkersServe(proc: ServerProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!proc.output().includes('2 workers serve') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(proc.output()).to.include('2 workers serve');
}

/** A connection lands on a given worker one time in two: 24 misses in a row happen once in 16 million. */
const ATTEMPTS = 24;

export class WorkerLogins {
  /** Every client placed, for the test's after() to stop. */
  readonly clients: Client[] = [];
  /** Every raw peer placed, for the test's after() to destroy. */
  readonly peers: RawXmppPeer[] = [];

  /** `proc` and `c2sPort` are read at each call: tests assign them in before(). */
  constructor(
    private readonly proc: () => ServerProcess,
    private readonly c2sPort: () => number,
  ) {}

  /** The worker of the last login of `user` the log shows since `from` (an offset in the output). */
  async workerOf(user: string, from: number): Promise<number> {
    const deadline = Date.now() + 3000;
    for (;;) {
      const lines = this.proc()
        .output()
        .slice(from)
        .split('\n')
        .filter((l) => l.includes('"authenticated"') && l.includes(`"user":"${user}@localhost"`));
      const last = lines[lines.length - 1];
      if (last) return (JSON.parse(last) as { worker: number }).worker;
      if (Date.now() > deadline) throw new Error(`no login of ${user} in the log`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Logs `user` (password `<user>-pw`) in until a connection lands on `worker`. */
  async client(worker: number, user: string, resource?: string): Promise<Client> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const from = this.proc().output().length;
      const client = await loginTo(`xmpp://127.0.0.1:${this.c2sPort()}`, { user, password: `${user}-pw`, ...(resource ? { resource } : {}) });
      if ((await this.workerOf(user, from)) === worker) {
        this.clients.push(client);
        return client;
      }
      await client.stop();
    }
    throw new Error(`no connection of ${user} landed on worker ${worker}`);
  }

  /** A raw client on `worker`, bound to `resource`. */
  async raw(worker: number, user: string, resource: string): Promise<RawXmppPeer> {
    const peer = await this.authenticated(worker, user);
    await peer.bind(resource);
    return peer;
  }

  /** A raw client on `worker`, authenticated and not bound yet (to resume a session, say). */
  async authenticated(worker: number, user: string): Promise<RawXmppPeer> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const from = this.proc().output().length;
      const peer = await RawXmppPeer.connect(this.c2sPort());
      await peer.authenticate(user, `${user}-pw`);
      if ((await this.workerOf(user, from)) === worker) {
        this.peers.push(peer);
        return peer;
      }
      peer.destroy();
    }
    throw new Error(`no connection of ${user} landed on worker ${worker}`);
  }
}
