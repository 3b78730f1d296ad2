/**
 * One load-generator process of bench/c2s/run.ts (started with child_process.fork): it holds its own
 * sessions, all from its own 127.0.0.x source address, and does what the parent asks over IPC:
 *
 *   init     the server's port, the domain, the shared password, TLS or not, the source address
 *   connect  log in the given accounts at a concurrency (to init's port or another) and keep the sessions;
 *            report each login's time
 *   chat     pair the held sessions (2i sends to 2i+1's full JID, or the first half to the second) and send
 *            at a fixed rate per sender for a
 *            warm-up and a measured window; report the latency of each message sent in the window
 *   close    close every held session
 *   exit
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createSecureContext, type SecureContext } from 'node:tls';
import { BenchClient, now } from './client.js';

export type WorkerCommand =
  | { type: 'init'; id: number; port: number; domain: string; password: string; localAddress: string; tls: boolean; caFile: string }
  /** `port`: another server than init's (a cluster's other node). */
  | { type: 'connect'; id: number; users: string[]; resource: string; concurrency: number; port?: number }
  /** `halves`: the first `pairs` held sessions send to the next `pairs` (e.g. on another node), not 2i to 2i+1. */
  | { type: 'chat'; id: number; pairs: number; ratePerSender: number; warmupMs: number; durationMs: number; drainMs: number; halves?: boolean }
  | { type: 'close'; id: number }
  | { type: 'exit'; id: number };

export interface ConnectResult {
  ok: number;
  failed: number;
  errors: string[];
  /** Each successful login's time in ms (connect to bind result). */
  latencies: Float64Array;
  wallMs: number;
  held: number;
}

export interface ChatResult {
  /** Messages sent during the measured window. */
  sent: number;
  /** Of those, received by their partner (before the drain ended). */
  received: number;
  /** Latency in ms of each message of the window that arrived. */
  latencies: Float64Array;
  /** Messages sent in the warm-up and the window together. */
  sentTotal: number;
  windowMs: number;
  /** This process's event-loop delay during the window, ms: high values mean the generator was the bottleneck. */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** How far the sender fell behind its schedule at worst, in messages. */
  maxBacklog: number;
}

export type WorkerReply = { type: 'done'; id: number; result?: unknown } | { type: 'error'; id: number; message: string };

let settings: Extract<WorkerCommand, { type: 'init' }> | undefined;
let secureContext: SecureContext | undefined;
const held: BenchClient[] = [];

class Samples {
  #data = new Float64Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.#data.length) {
      const grown = new Float64Array(this.#data.length * 2);
      grown.set(this.#data);
      this.#data = grown;
    }
    this.#data[this.length++] = value;
  }
  values(): Float64Array {
    return this.#data.slice(0, this.length);
  }
}

async function connect(command: Extract<WorkerCommand, { type: 'connect' }>): Promise<ConnectResult> {
  const s = settings!;
  const latencies = new Samples();
  const errors: string[] = [];
  let failed = 0;
  let next = 0;
  const started = now();
  const lane = async () => {
    while (next < command.users.length) {
      const user = command.users[next++]!;
      const client = new BenchClient({
        port: command.port ?? s.port,
        domain: s.domain,
        user,
        password: s.password,
        resource: command.resource,
        localAddress: s.localAddress,
        tls: s.tls ? { secureContext: secureContext! } : undefined,
      });
      try {
        const times = await client.login();
        latencies.push(times.totalMs);
        held.push(client);
      } catch (err) {
        failed++;
        client.destroy();
        if (errors.length < 5) errors.push(`${user}: ${(err as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(command.concurrency, command.users.length)) }, lane));
  return { ok: latencies.length, failed, errors, latencies: latencies.values(), wallMs: now() - started, held: held.length };
}

async function chat(command: Extract<WorkerCommand, { type: 'chat' }>): Promise<ChatResult> {
  if (held.length < command.pairs * 2) throw new Error(`chat needs ${command.pairs * 2} sessions, this worker holds ${held.length}`);
  const senders = Array.from({ length: command.pairs }, (_, i) => held[command.halves ? i : 2 * i]!);
  const receivers = Array.from({ length: command.pairs }, (_, i) => held[command.halves ? command.pairs + i : 2 * i + 1]!);
  const start = now();
  const windowStart = start + command.warmupMs;
  const windowEnd = windowStart + command.durationMs;
  const latencies = new Samples();
  let sentInWindow = 0;
  let receivedInWindow = 0;
  for (const receiver of receivers) {
    receiver.onMessage((body, at) => {
      const sentAt = Number(body);
      if (sentAt >= windowStart && sentAt < windowEnd) {
        receivedInWindow++;
        latencies.push(at - sentAt);
      }
    });
  }
  const totalRate = command.ratePerSender * command.pairs;
  let sent = 0;
  let turn = 0;
  let maxBacklog = 0;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  let loopStarted = false;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const t = now();
      if (!loopStarted && t >= windowStart) {
        loop.enable();
        loopStarted = true;
      }
      if (t >= windowEnd) {
        clearInterval(timer);
        resolve();
        return;
      }
      const due = Math.floor(((t - start) / 1000) * totalRate);
      maxBacklog = Math.max(maxBacklog, due - sent);
      while (sent < due) {
        const i = turn++ % command.pairs;
        const at = now();
        if (senders[i]!.send(receivers[i]!.jid, at.toFixed(3)) && at >= windowStart && at < windowEnd) sentInWindow++;
        sent++;
      }
    };
    const timer = setInterval(tick, 5);
  });
  loop.disable();
  // Let the last messages of the window arrive.
  const drainUntil = now() + command.drainMs;
  while (receivedInWindow < sentInWindow && now() < drainUntil) await new Promise((r) => setTimeout(r, 20));
  for (const receiver of receivers) receiver.onMessage(() => {});
  const ns = 1e6;
  return {
    sent: sentInWindow,
    received: receivedInWindow,
    latencies: latencies.values(),
    sentTotal: sent,
    windowMs: command.durationMs,
    loopDelayP99Ms: loopStarted ? loop.percentile(99) / ns : NaN,
    loopDelayMaxMs: loopStarted ? loop.max / ns : NaN,
    maxBacklog,
  };
}

async function closeAll(): Promise<void> {
  const clients = held.splice(0);
  // In batches: tens of thousands of closes at once would only queue up.
  for (let i = 0; i < clients.length; i += 500) await Promise.all(clients.slice(i, i + 500).map((c) => c.close()));
}

async function handle(command: WorkerCommand): Promise<unknown> {
  switch (command.type) {
    case 'init':
      settings = command;
      secureContext = command.tls ? createSecureContext({ ca: readFileSync(command.caFile) }) : undefined;
      return undefined;
    case 'connect':
      return connect(command);
    case 'chat':
      return chat(command);
    case 'close':
      return closeAll();
    case 'exit':
      setImmediate(() => process.exit(0));
      return undefined;
  }
}

process.on('message', (command: WorkerCommand) => {
  handle(command).then(
    (result) => process.send!({ type: 'done', id: command.id, result } satisfies WorkerReply),
    (err: unknown) => process.send!({ type: 'error', id: command.id, message: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies WorkerReply),
  );
});
process.on('disconnect', () => process.exit(0));
