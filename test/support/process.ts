/**
 * The server as a real process, the way an operator runs it: `servicectl foreground` (or `npm start`),
 * on ports chosen free beforehand.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { request, type RawConfig } from './server.js';

export const REPO = new URL('../../', import.meta.url).pathname;
export const SERVICECTL = join(REPO, 'cli/dist/servicectl.js');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly dir: string;
  readonly configFile: string;
  output(): string;
  /** Resolves with the exit code (or the signal name). */
  readonly exited: Promise<number | string>;
  cleanup(): Promise<void>;
}

/** Starts `servicectl --config <file> foreground` (or another argv) and waits until /api/status answers. */
export async function spawnServer(
  config: (port: number, dir: string) => RawConfig,
  argv?: (configFile: string) => string[],
  prepare?: (dir: string) => Promise<void>,
): Promise<ServerProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'service-proc-'));
  const port = await freePort();
  const configFile = join(dir, 'service.yml');
  await writeFile(configFile, stringify({ data_dir: join(dir, 'data'), ...config(port, dir) }));
  await prepare?.(dir);
  return launch(dir, port, configFile, argv);
}

/**
 * Starts the server again with the directory, configuration file and port of `previous`, which must have
 * exited (stopped, or killed as a crash would): what an operator's supervisor does after a crash. The data
 * directory is kept as the previous run left it. `cleanup()` of the new process removes the directory; the
 * previous one's must not be called any more.
 */
export async function respawnServer(previous: ServerProcess, argv?: (configFile: string) => string[]): Promise<ServerProcess> {
  if (previous.child.exitCode === null && previous.child.signalCode === null) throw new Error('the previous server process is still running');
  return launch(previous.dir, previous.port, previous.configFile, argv);
}

async function launch(dir: string, port: number, configFile: string, argv?: (configFile: string) => string[]): Promise<ServerProcess> {
  const args = argv ? argv(configFile) : [SERVICECTL, '--config', configFile, 'foreground'];
  const child = spawn(args[0] === 'npm' ? 'npm' : process.execPath, args[0] === 'npm' ? args.slice(1) : args, {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: args[0] === 'npm',
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const proc: ServerProcess = {
    child,
    port,
    dir,
    configFile,
    output: () => out,
    exited,
    cleanup: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  const deadline = Date.now() + 20_000;
  let settled = false;
  void exited.then(() => (settled = true));
  while (Date.now() < deadline && !settled) {
    try {
      const res = await request(`http://127.0.0.1:${port}/api/status`, { method: 'POST', body: '{}' });
      if (res.status === 200) return proc;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await proc.cleanup();
  throw new Error(`the server did not start:\n${out}`);
}

/** A config serving /api on `port` with loopback allowed to run everything (process tests only). */
export function openConfig(port: number): RawConfig {
  return {
    hosts: ['localhost'],
    loglevel: 'info',
    // Every SCRAM mechanism is tested, so every hash is stored (the default, one hash, has its own test).
    auth_scram_hash: ['sha', 'sha256', 'sha512'],
    listen: [{ port, ip: '127.0.0.1', module: 'service_http', request_handlers: { '/api': 'mod_http_api' } }],
    acl: { loopback: { ip: ['127.0.0.0/8'] } },
    api_permissions: { 'loopback admin': { who: { acl: 'loopback' }, what: '*' } },
    modules: { mod_http_api: {} },
  };
}
