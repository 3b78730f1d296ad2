/**
 * The same-machine transport between workers: a unix socket per worker in the data directory (mode 0700,
 * like the control socket, so only the server's user reaches it), carrying length-prefixed JSON messages.
 * Each worker writes to a peer on its own outgoing connection and reads what peers send on the ones they
 * opened, so each direction of a pair keeps its order. What one turn of the event loop sends to a peer goes
 * out in one write: a burst of stanzas costs one system call, not one each.
 */
import { unlink } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../log/logger.js';

/** A message larger than this is refused (a stanza is limited far below; a directory sync is split). */
const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** Reads length-prefixed frames off a socket and hands each, parsed, to `onMessage`. */
function readFrames(socket: Socket, onMessage: (message: unknown) => void, logger: Logger): void {
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let offset = 0;
    while (pending.length - offset >= 4) {
      const length = pending.readUInt32BE(offset);
      if (length > MAX_FRAME_BYTES) {
        logger.error({ length }, 'a worker sent a frame of %d bytes: closing its connection', length);
        socket.destroy();
        return;
      }
      if (pending.length - offset - 4 < length) break;
      const text = pending.toString('utf8', offset + 4, offset + 4 + length);
      offset += 4 + length;
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        logger.error('a worker sent a frame that is not JSON: ignored');
        continue;
      }
      onMessage(message);
    }
    pending = offset === pending.length ? Buffer.alloc(0) : pending.subarray(offset);
  });
}

/** The socket this worker's peers write to. */
export class PeerListener {
  readonly #sockets = new Set<Socket>();
  readonly #server: Server;

  private constructor(
    readonly path: string,
    onMessage: (message: unknown) => void,
    logger: Logger,
  ) {
    this.#server = createServer((socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
      socket.on('error', (err) => logger.debug({ err: err.message }, 'a worker connection failed: %s', err.message));
      readFrames(socket, onMessage, logger);
    });
  }

  static async open(path: string, onMessage: (message: unknown) => void, logger: Logger): Promise<PeerListener> {
    await unlink(path).catch(() => {});
    const listener = new PeerListener(path, onMessage, logger);
    await new Promise<void>((resolve, reject) => {
      listener.#server.once('error', reject);
      // exclusive: a worker of node:cluster listens itself, instead of sharing one socket through the primary.
      listener.#server.listen({ path, exclusive: true }, () => resolve());
    });
    return listener;
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    await closed;
    await unlink(this.path).catch(() => {});
  }
}

/** This worker's connection to one peer: messages queued in a turn go out in one write, in order. */
export class PeerConnection {
  #queue: Buffer[] = [];
  #flushing = false;
  #open = false;
  #closed = false;

  private constructor(
    private readonly socket: Socket,
    readonly peer: number,
  ) {}

  static connect(path: string, peer: number, logger: Logger, onClose: () => void): Promise<PeerConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(path);
      const connection = new PeerConnection(socket, peer);
      socket.once('connect', () => {
        connection.#open = true;
        resolve(connection);
      });
      socket.on('error', (err) => {
        if (!connection.#open) reject(err);
        else logger.warn({ peer, err: err.message }, 'the connection to worker %d failed: %s', peer, err.message);
      });
      socket.on('close', () => {
        connection.#closed = true;
        if (connection.#open) onClose();
      });
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Queues a message; false when the connection is gone (the caller treats the peer as unreachable). `now` writes
   * it (after what is queued, in order) at once instead of at the end of the turn: for what must reach the peer
   * before this worker answers its client.
   */
  send(message: object, now = false): boolean {
    if (this.#closed) return false;
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    const header = Buffer.allocUnsafe(4);
    header.writeUInt32BE(body.length, 0);
    this.#queue.push(header, body);
    if (now) {
      this.#flush();
      return true;
    }
    if (!this.#flushing) {
      this.#flushing = true;
      setImmediate(() => this.#flush());
    }
    return true;
  }

  #flush(): void {
    this.#flushing = false;
    if (this.#closed || !this.#queue.length) return;
    const chunk = Buffer.concat(this.#queue);
    this.#queue = [];
    this.socket.write(chunk);
  }

  /** Sends what is queued, then closes. */
  async end(): Promise<void> {
    this.#flush();
    if (this.#closed) return;
    await new Promise<void>((resolve) => this.socket.end(() => resolve()));
    this.#closed = true;
  }
}
