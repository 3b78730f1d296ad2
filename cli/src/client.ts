/**
 * The client end of the control socket: one connection, requests answered in order, with progress and
 * output frames delivered as they arrive.
 */
import { connect, type Socket } from 'node:net';
import type { ControlFrame, ControlRequest, PongFrame } from '@service/kernel/cli';

type Final = Exclude<ControlFrame, { type: 'progress' } | { type: 'output' }>;

export interface CallHandlers {
  progress?(done: number, total?: number, label?: string): void;
  output?(text: string): void;
}

/** Thrown when nothing answers on the socket: the server is not running (or another data_dir is meant). */
export class NotRunning extends Error {}

export class ControlClient {
  #nextId = 1;
  #buffer = '';
  readonly #pending = new Map<number, { resolve(frame: Final): void; reject(err: Error): void; handlers: CallHandlers }>();

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.#receive(chunk));
    const gone = () => {
      for (const { reject } of this.#pending.values()) reject(new Error('the server closed the control connection'));
      this.#pending.clear();
    };
    socket.on('close', gone);
    socket.on('error', gone);
  }

  static connect(path: string): Promise<ControlClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(path);
      socket.once('connect', () => {
        socket.removeAllListeners('error');
        resolve(new ControlClient(socket));
      });
      socket.once('error', (err: NodeJS.ErrnoException) => reject(new NotRunning(`no server answers on ${path} (${err.code ?? err.message})`)));
    });
  }

  async ping(): Promise<PongFrame> {
    return (await this.#send({ op: 'ping' })) as PongFrame;
  }

  request(request: Omit<Extract<ControlRequest, { op: 'call' }>, 'id'> | Omit<Extract<ControlRequest, { op: 'describe' }>, 'id'>, handlers: CallHandlers = {}): Promise<Final> {
    return this.#send(request, handlers);
  }

  /** Resolves when the server closes the connection (it does when it stops). */
  closed(): Promise<void> {
    if (this.socket.destroyed) return Promise.resolve();
    return new Promise((resolve) => this.socket.once('close', () => resolve()));
  }

  close(): void {
    this.socket.end();
  }

  #send(request: Record<string, unknown>, handlers: CallHandlers = {}): Promise<Final> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, handlers });
      this.socket.write(`${JSON.stringify({ ...request, id })}\n`);
    });
  }

  #receive(chunk: string): void {
    this.#buffer += chunk;
    let newline: number;
    while ((newline = this.#buffer.indexOf('\n')) !== -1) {
      const frame = JSON.parse(this.#buffer.slice(0, newline)) as ControlFrame;
      this.#buffer = this.#buffer.slice(newline + 1);
      const pending = this.#pending.get(frame.id);
      if (!pending) continue;
      if (frame.type === 'progress') pending.handlers.progress?.(frame.done, frame.total, frame.label);
      else if (frame.type === 'output') pending.handlers.output?.(frame.text);
      else {
        this.#pending.delete(frame.id);
        pending.resolve(frame);
      }
    }
  }
}
