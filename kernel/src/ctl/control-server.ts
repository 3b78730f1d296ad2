/**
 * The `service_ctl` frontend: a unix socket in the data directory that servicectl talks to. Calls go
 * through the same command bus as HTTP (same validation, same api_permissions — the implicit "console
 * commands" group lets it run everything unless the configuration defines that group), with the
 * positional words of the command line mapped onto the declaration here.
 */
import { chmod, unlink } from 'node:fs/promises';
import { connect, createServer, type Server as NetServer, type Socket } from 'node:net';
import { asCommandError } from '@service/plugin-api';
import type { Caller } from '@service/plugin-api';
import { nextRequestId } from '../http/listener.js';
import type { Logger } from '../log/logger.js';
import type { KernelServices } from '../modules/services.js';
import { KERNEL_VERSION } from '../version.js';
import { parseArgv, UsageError } from './argv.js';
import { MAX_REQUEST_BYTES, type ControlFrame, type ControlRequest } from './protocol.js';

const PROGRESS_INTERVAL_MS = 100;

export class ControlServer {
  private constructor(
    private readonly server: NetServer,
    readonly path: string,
    private readonly sockets: Set<Socket>,
  ) {}

  /** Listens on `path`; refuses when another live server answers there, removes a stale socket. */
  static async start(path: string, services: KernelServices, logger: Logger): Promise<ControlServer> {
    if (await answers(path)) {
      throw new Error(`another server is running with this data directory (its control socket ${path} answers): stop it first`);
    }
    await unlink(path).catch(() => {});
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      serve(socket, services, logger);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(new Error(`cannot open the control socket ${path}: ${err.code === 'ENAMETOOLONG' || path.length > 100 ? 'the path is too long for a unix socket (move data_dir)' : (err.code ?? err.message)}`)),
      );
      // exclusive: under workers (node:cluster) the worker that serves the socket owns it, not the primary.
      server.listen({ path, exclusive: true }, () => resolve());
    });
    await chmod(path, 0o600);
    logger.debug({ path }, 'control socket open');
    return new ControlServer(server, path, sockets);
  }

  /** Stops accepting, ends open connections (a servicectl waiting for `stop` sees the end), removes the socket. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.end();
    await closed;
    await unlink(this.path).catch(() => {});
  }
}

/** Whether a live server listens at `path`. */
export function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function serve(socket: Socket, services: KernelServices, logger: Logger): void {
  let buffer = '';
  let queue = Promise.resolve();
  socket.setEncoding('utf8');
  const send = (frame: ControlFrame) => {
    if (!socket.destroyed) socket.write(`${JSON.stringify(frame)}\n`);
  };
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    if (buffer.length > MAX_REQUEST_BYTES) {
      socket.destroy();
      return;
    }
    let newline: number;
    while ((newline = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      // One request at a time per connection, in order.
      queue = queue.then(() => handle(line, send, services)).catch((err: unknown) => logger.error({ err }, 'control request failed'));
    }
  });
  socket.on('error', () => {});
}

async function handle(line: string, send: (frame: ControlFrame) => void, services: KernelServices): Promise<void> {
  let request: ControlRequest;
  try {
    request = JSON.parse(line) as ControlRequest;
  } catch {
    send({ id: 0, type: 'error', kind: 'bad_request', message: 'the control request is not valid JSON' });
    return;
  }
  const { id } = request;
  if (request.op === 'ping') {
    const config = services.config();
    send({ id, type: 'pong', pid: services.workers.pid, node: config.node_name, version: KERNEL_VERSION, status: services.server.status, workers: services.workers.serving(), mode: services.server.mode, configFile: config.file });
    return;
  }
  if (request.op === 'describe') {
    send({ id, type: 'docs', docs: await services.commandDocs({ runtimeOnly: request.runtimeOnly }) });
    return;
  }
  if (request.op !== 'call' || typeof request.command !== 'string') {
    send({ id, type: 'error', kind: 'bad_request', message: `unknown control operation ${JSON.stringify((request as { op?: unknown }).op)}` });
    return;
  }
  const { commands } = services;
  const caller: Caller = { frontend: 'service_ctl', requestId: nextRequestId() };
  let lastProgress = 0;
  try {
    const registered = commands.registry.resolve(request.command, request.version) ?? (await commands.unknown(request.command, request.version));
    const args = request.args ?? parseArgv(registered.decl, request.argv ?? []);
    const result = await commands.execute(request.command, args, caller, {
      version: request.version,
      progress: (done, total, label) => {
        const now = Date.now();
        if (now - lastProgress < PROGRESS_INTERVAL_MS && done !== total) return;
        lastProgress = now;
        send({ id, type: 'progress', done, total, label });
      },
      output: (text) => send({ id, type: 'output', text }),
    });
    send({ id, type: 'result', command: request.command, result, resultType: registered.decl.result.type });
  } catch (err) {
    const error = asCommandError(err);
    send({ id, type: 'error', kind: err instanceof UsageError ? 'usage' : (error?.kind ?? 'internal'), message: error?.message ?? String(err) });
  }
}
