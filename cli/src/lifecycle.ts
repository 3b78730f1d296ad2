/**
 * Running the server: `foreground` (this process; Ctrl-C stops it), `start` (a detached process, logging
 * to its file, with a pid file), `stop`, `restart`, `status` (exit 0 when it runs, 3 when not), and, as
 * ejabberdctl's, `started` and `stopped`, which wait for the server to serve with every worker or to be gone.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunningService } from '@service/kernel/start';
import type { ConfigLocation, PongFrame } from '@service/kernel/cli';
import { ControlClient, NotRunning } from './client.js';
import { EXIT, exitStatusOf, fail } from './exit.js';
import { notRunningMessage, socketPath } from './run-command.js';

export const PID_FILE = 'service.pid';
const SELF = fileURLToPath(new URL('./servicectl.js', import.meta.url));
const WAIT_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Started, and every worker serves: what `start`, `restart` and `started` wait for. */
const fullyStarted = (pong: PongFrame) => pong.status === 'started' && pong.workers.serving >= pong.workers.count;

export async function foreground(location: ConfigLocation, options: { daemon: boolean }): Promise<void> {
  // The server itself (the primary of several workers loads only the start: @service/kernel/start).
  const { ConfigError, ModuleError, WorkerStartError, startService, workerIdentity } = await import('@service/kernel/start');
  // Asked before anything starts: a second server would open the database, start modules and write into
  // the first one's log before finding the control socket taken.
  // A worker of this server (the primary forked it) finds worker 1's socket answering: not another server.
  const worker = workerIdentity();
  const running = worker ? null : await connectOrNull(location);
  if (running) {
    running.close();
    fail(`a server already runs with data_dir ${location.dataDir} (it answers on ${socketPath(location)})`, EXIT.failed);
  }
  let server: RunningService;
  try {
    server = await startService({
      configFile: location.file,
      // A daemon logs to its file only; the foreground also to the terminal.
      stdout: !options.daemon,
      pretty: !options.daemon && process.stdout.isTTY === true,
      onExit: (status) => exit(status),
    });
  } catch (err) {
    if (err instanceof ConfigError || err instanceof ModuleError) fail(err.message, EXIT.config);
    // A worker that could not start said why on stderr; its status says what kind of failure it was.
    if (err instanceof WorkerStartError) fail(`cannot start: ${err.message}`, err.status);
    // A port another program holds is a listener of the configuration that cannot start.
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') fail(`cannot start: ${(err as Error).message}`, EXIT.config);
    fail(`cannot start: ${(err as Error).message}`, EXIT.failed);
  }
  // The pid file is the primary's (the one servicectl stop waits for), never a worker's.
  const pidFile = worker ? undefined : join(server.dataDir, PID_FILE);
  if (pidFile) writeFileSync(pidFile, `${process.pid}\n`);
  const exit = (status: number) => {
    if (pidFile) rmSync(pidFile, { force: true });
    process.exit(status);
  };
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      process.stderr.write(`servicectl: ${signal} again, exiting now\n`);
      exit(130);
    }
    stopping = true;
    server.logger.notice({ signal }, 'received %s, stopping', signal);
    server.shutdown().then(
      () => exit(0),
      (err: unknown) => {
        server.logger.error({ err }, 'stop failed');
        exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // A bug in one request's async path must not take the server down: log it loudly and keep serving.
  process.on('unhandledRejection', (err) => server.logger.error({ err }, 'unhandled promise rejection'));
}

async function connectOrNull(location: ConfigLocation): Promise<ControlClient | null> {
  try {
    return await ControlClient.connect(socketPath(location));
  } catch (err) {
    if (err instanceof NotRunning) return null;
    throw err;
  }
}

export async function start(location: ConfigLocation): Promise<never> {
  const running = await connectOrNull(location);
  if (running) {
    const { pid } = await running.ping();
    running.close();
    return fail(`the server is already running (pid ${pid}): servicectl --config ${location.file} stop first`, EXIT.failed);
  }
  const child = spawn(process.execPath, [SELF, '--config', location.file, 'foreground', '--daemon'], {
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited: number | null = null;
  child.on('exit', (code) => (exited = code ?? 1));
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    if (exited !== null) {
      process.stderr.write(stderr);
      process.exit(exited || EXIT.failed);
    }
    const client = await connectOrNull(location);
    if (client) {
      const pong = await client.ping();
      client.close();
      if (fullyStarted(pong)) {
        child.stderr!.destroy();
        child.unref();
        process.stdout.write(`service started (pid ${pong.pid}) on ${pong.node}; log: ${join(location.dataDir, 'service.log')}\n`);
        process.exit(EXIT.ok);
      }
    }
    await sleep(100);
  }
  child.kill('SIGKILL');
  return fail(`the server did not start within ${WAIT_MS / 1000} s:\n${stderr}`, EXIT.failed);
}

export async function stop(location: ConfigLocation): Promise<never> {
  const client = await connectOrNull(location);
  if (!client) return fail(notRunningMessage(location, `no answer on ${socketPath(location)}`), EXIT.notRunning);
  const { pid } = await client.ping();
  const frame = await client.request({ op: 'call', command: 'stop', argv: [] });
  if (frame.type === 'error') return fail(frame.message, EXIT.failed);
  await client.closed();
  await waitForExit(pid);
  process.stdout.write(`service stopped (pid ${pid})\n`);
  process.exit(EXIT.ok);
}

export async function restart(location: ConfigLocation): Promise<never> {
  const client = await connectOrNull(location);
  if (!client) return fail(notRunningMessage(location, `no answer on ${socketPath(location)}`), EXIT.notRunning);
  const frame = await client.request({ op: 'call', command: 'restart', argv: [] });
  // The server refuses a restart (422) only when its configuration file would not start it again.
  if (frame.type === 'error') return fail(frame.message, frame.kind === 'failed' ? EXIT.config : exitStatusOf(frame.kind));
  await client.closed();
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    await sleep(100);
    const again = await connectOrNull(location);
    if (!again) continue;
    const pong = await again.ping();
    again.close();
    if (fullyStarted(pong)) {
      process.stdout.write(`service restarted on ${pong.node}\n`);
      process.exit(EXIT.ok);
    }
  }
  return fail(`the server did not come back within ${WAIT_MS / 1000} s: see its log`, EXIT.failed);
}

/** As `ejabberdctl status`: the status text and exit 0 when running; exit 3 when not. */
export async function status(location: ConfigLocation, json: boolean): Promise<never> {
  const client = await connectOrNull(location);
  if (!client) {
    process.stdout.write(`service is not running (no answer on ${socketPath(location)})\n`);
    process.exit(EXIT.notRunning);
  }
  const frame = await client.request({ op: 'call', command: 'status', argv: [] });
  const pong = await client.ping();
  client.close();
  if (frame.type !== 'result') return fail(frame.type === 'error' ? frame.message : 'unexpected answer', EXIT.failed);
  process.stdout.write(json ? `${JSON.stringify(frame.result)}\n` : `${String(frame.result)}\n`);
  process.exit(pong.status === 'started' ? EXIT.ok : EXIT.notRunning);
}

/**
 * `servicectl started` / `stopped`, as ejabberdctl's: wait (up to a minute) until the server serves with
 * every worker, or until nothing answers; exit 0 then, 1 when the minute runs out.
 */
export async function waitFor(location: ConfigLocation, state: 'started' | 'stopped'): Promise<never> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const client = await connectOrNull(location);
    const pong = client ? await client.ping().catch(() => null) : null;
    client?.close();
    if (state === 'stopped' ? !client : pong !== null && fullyStarted(pong)) process.exit(EXIT.ok);
    await sleep(100);
  }
  return fail(`the server is not ${state} after ${WAIT_MS / 1000} s`, EXIT.failed);
}

async function waitForExit(pid: number): Promise<void> {
  if (pid === process.pid) return;
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    if (!alive(pid)) return;
    await sleep(20);
  }
  fail(`the server (pid ${pid}) did not exit within ${WAIT_MS / 1000} s`, EXIT.failed);
}

/**
 * Whether a process still runs. A daemon whose parent is gone is reaped by init, which may take a while:
 * a zombie (state Z in /proc) has exited already.
 */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}
