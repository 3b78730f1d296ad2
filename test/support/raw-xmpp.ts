/**
 * A tiny raw XMPP peer for tests that must send what no real client would: a TCP socket (optionally
 * upgraded with STARTTLS, verifying the test certificate) or a WebSocket with the `xmpp` subprotocol,
 * on which the test writes raw bytes and reads back what the server sent, as text. It knows just enough
 * XMPP to open a stream, authenticate with PLAIN and bind, and to recognize a stream error and the end
 * of the connection. Its STARTTLS can be capped at a TLS version and resume an earlier TLS session, for the
 * SASL tests (sasl-client.ts) that need TLS 1.2's tls-unique or an abbreviated handshake.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { TLSSocket, connect as tlsConnect, type SecureVersion } from 'node:tls';
import { WebSocket } from 'ws';

export const NS_STREAM = 'http://etherx.jabber.org/streams';
export const NS_STREAMS = 'urn:ietf:params:xml:ns:xmpp-streams';
export const NS_FRAMING = 'urn:ietf:params:xml:ns:xmpp-framing';

/** A complete `<stream:features>` element (empty or not). */
const FEATURES = /<stream:features\b[^>]*\/>|<stream:features\b[^>]*>[\s\S]*?<\/stream:features>/;

export interface StreamErrorInfo {
  /** The defined condition, e.g. `policy-violation`. */
  condition: string;
  /** The `<text/>`, unescaped, when there is one. */
  text: string | undefined;
  /** The whole `<stream:error>` element as received. */
  raw: string;
}

export interface HeaderOptions {
  to?: string;
  /** null leaves the attribute out. */
  version?: string | null;
  /** The content namespace (`xmlns`); null leaves it out. */
  xmlns?: string | null;
  /** The namespace bound to the `stream` prefix. */
  streamNs?: string;
  /** Prefix the `<?xml?>` declaration. */
  declaration?: boolean;
}

/** `<stream:stream …>` as a client opens it (RFC 6120 §4.2). */
export function streamHeader(options: HeaderOptions = {}): string {
  const attrs: string[] = [];
  const to = options.to ?? 'localhost';
  if (to) attrs.push(`to='${to}'`);
  if (options.version !== null) attrs.push(`version='${options.version ?? '1.0'}'`);
  if (options.xmlns !== null) attrs.push(`xmlns='${options.xmlns ?? 'jabber:client'}'`);
  attrs.push(`xmlns:stream='${options.streamNs ?? NS_STREAM}'`);
  return `${options.declaration === false ? '' : "<?xml version='1.0'?>"}<stream:stream ${attrs.join(' ')}>`;
}

/** The text of XML character data or an attribute value, with the predefined entities replaced. */
export function unescapeXml(text: string): string {
  return text.replace(/&(lt|gt|amp|quot|apos);/g, (_, e: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" })[e]!);
}

/** Finds the first complete stream error in `text`. */
export function parseStreamError(text: string): StreamErrorInfo | undefined {
  const match = /<stream:error\b[^>]*>([\s\S]*?)<\/stream:error>|<stream:error\b[^>]*\/>/.exec(text);
  if (!match) return undefined;
  const inner = match[1] ?? '';
  let condition = '';
  for (const m of inner.matchAll(/<([A-Za-z][\w.-]*)\b([^>]*?)\/?>/g)) {
    if (m[1] !== 'text' && m[2]!.includes(NS_STREAMS)) {
      condition = m[1]!;
      break;
    }
  }
  const textMatch = /<text\b[^>]*>([\s\S]*?)<\/text>/.exec(inner);
  return { condition, text: textMatch ? unescapeXml(textMatch[1]!) : undefined, raw: match[0] };
}

interface Waiter {
  test: () => boolean;
  resolve: () => void;
}

/** What both peers share: received text, waiting for patterns, the stream error, the close. */
abstract class PeerBase {
  /** Everything received (as UTF-8 text) since the last `resetReceived`. */
  received = '';
  /** Everything received since the connection was made. */
  all = '';
  /** Bytes (TCP) or characters of frames (WebSocket) written so far. */
  bytesWritten = 0;
  /** bytesWritten at the moment a stream error was first seen. */
  bytesWrittenAtError: number | undefined;
  #closed = false;
  #waiters = new Set<Waiter>();
  readonly closed: Promise<void>;
  #resolveClosed!: () => void;

  constructor() {
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  protected onText(text: string): void {
    this.received += text;
    this.all += text;
    if (this.bytesWrittenAtError === undefined && this.all.includes('<stream:error')) this.bytesWrittenAtError = this.bytesWritten;
    this.#check();
  }

  protected onClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#resolveClosed();
    this.#check();
  }

  #check(): void {
    for (const waiter of this.#waiters) {
      if (waiter.test()) {
        this.#waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }

  /** Forgets what was received so far (after a stream restart). */
  resetReceived(): void {
    this.received = '';
  }

  /**
   * Resolves with the first match of `pattern` in what was received since the last reset; rejects after
   * `ms`, or when the connection closes without a match.
   */
  waitFor(pattern: RegExp, ms = 5000): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      let match: RegExpExecArray | null = null;
      const waiter: Waiter = {
        test: () => (match = pattern.exec(this.received)) !== null || this.#closed,
        resolve: () => {
          clearTimeout(timer);
          if (match) resolve(match);
          else reject(new Error(`the connection closed before ${pattern} arrived; received: ${clip(this.all)}`));
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`timed out after ${ms} ms waiting for ${pattern}; received: ${clip(this.all)}`));
      }, ms);
      if (waiter.test()) waiter.resolve();
      else this.#waiters.add(waiter);
    });
  }

  /** The first stream error received on this connection (waiting up to `ms` for it). */
  async streamError(ms = 5000): Promise<StreamErrorInfo> {
    const found = parseStreamError(this.all);
    if (found) return found;
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        test: () => parseStreamError(this.all) !== undefined || this.#closed,
        resolve: () => {
          clearTimeout(timer);
          const error = parseStreamError(this.all);
          if (error) resolve(error);
          else reject(new Error(`the connection closed without a stream error; received: ${clip(this.all)}`));
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`no stream error within ${ms} ms; received: ${clip(this.all)}`));
      }, ms);
      if (waiter.test()) waiter.resolve();
      else this.#waiters.add(waiter);
    });
  }

  /** Resolves once the connection is closed; rejects after `ms`. */
  waitClosed(ms = 5000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the connection was still open after ${ms} ms; received: ${clip(this.all)}`)), ms);
      void this.closed.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

function clip(text: string, max = 600): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max / 2)}…${text.slice(-max / 2)}` : text);
}

export interface RawConnectOptions {
  host?: string;
  localAddress?: string;
  /** Milliseconds to wait for the TCP connection. */
  timeoutMs?: number;
}

export interface StartTlsOptions {
  /** The name the server's certificate is verified for (SNI too); default localhost. */
  servername?: string;
  /** The highest TLS version offered; default Node's (TLS 1.3). */
  maxVersion?: SecureVersion;
  /** The lowest TLS version accepted; default TLS 1.2. */
  minVersion?: SecureVersion;
  /** A TLS session (`tlsSession` of an earlier peer) to offer to resume: an abbreviated handshake. */
  session?: Buffer;
  /** Milliseconds to wait for `<proceed/>`. */
  timeoutMs?: number;
}

/** A raw TCP peer. */
export class RawXmppPeer extends PeerBase {
  /** The server closed its sending side (FIN), before or with the close. */
  serverEnded = false;
  /** The latest TLS session the server gave (a ticket), to resume it on another connection. */
  tlsSession: Buffer | undefined;
  #socket: Socket | TLSSocket;
  #decoder = new TextDecoder('utf-8');

  private constructor(socket: Socket) {
    super();
    this.#socket = socket;
    this.#listen(socket);
  }

  static connect(port: number, options: RawConnectOptions = {}): Promise<RawXmppPeer> {
    return new Promise((resolve, reject) => {
      const socket = netConnect({ port, host: options.host ?? '127.0.0.1', localAddress: options.localAddress });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`could not connect to port ${port} within ${options.timeoutMs ?? 5000} ms`));
      }, options.timeoutMs ?? 5000);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', reject);
        resolve(new RawXmppPeer(socket));
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  get socket(): Socket | TLSSocket {
    return this.#socket;
  }

  /** The TLS socket after STARTTLS (for its protocol, Finished messages, exporter, certificate). */
  get tls(): TLSSocket {
    if (!(this.#socket instanceof TLSSocket)) throw new Error('the stream is not encrypted yet');
    return this.#socket;
  }

  #listen(socket: Socket): void {
    socket.on('data', (chunk: Buffer) => this.onText(this.#decoder.decode(chunk, { stream: true })));
    socket.on('end', () => (this.serverEnded = true));
    socket.on('close', () => this.onClosed());
    // Resets while we are still writing are expected with hostile input.
    socket.on('error', () => {});
  }

  /** Writes raw bytes; false when the connection is gone. */
  write(data: string | Buffer): boolean {
    if (this.isClosed || this.#socket.destroyed || !this.#socket.writable) return false;
    this.bytesWritten += typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
    this.#socket.write(data);
    return true;
  }

  /**
   * Writes `chunk` repeatedly up to `total` bytes, honouring backpressure, and stops early when
   * `stop()` says so or the connection goes. With `paceMs`, waits that long after each chunk, so that
   * the server reads each chunk before the next one is written: otherwise megabytes sit in the kernel's
   * socket buffers on loopback, and "how much was sent before the server answered" says little about
   * what the server read. Resolves with the bytes written.
   */
  async writeRepeated(chunk: string | Buffer, total: number, stop: () => boolean = () => false, paceMs = 0): Promise<number> {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let written = 0;
    while (written < total && !stop()) {
      const piece = total - written >= buffer.byteLength ? buffer : buffer.subarray(0, total - written);
      if (this.isClosed || this.#socket.destroyed || !this.#socket.writable) break;
      this.bytesWritten += piece.byteLength;
      written += piece.byteLength;
      if (!this.#socket.write(piece)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            this.#socket.off('drain', done);
            this.#socket.off('close', done);
            resolve();
          };
          this.#socket.on('drain', done);
          this.#socket.on('close', done);
        });
      }
      if (paceMs > 0) await new Promise((resolve) => setTimeout(resolve, paceMs));
    }
    return written;
  }

  /** Sends a stream header and waits for the server's features. */
  async open(options: HeaderOptions = {}, ms = 5000): Promise<string> {
    this.resetReceived();
    this.write(streamHeader(options));
    return (await this.waitFor(FEATURES, ms))[0];
  }

  /**
   * STARTTLS (the stream must be open), then TLS on the same socket, verifying the server as `servername`
   * (a string is the servername, as before the options). The sessions the server gives are kept in `tlsSession`.
   */
  async startTls(options: string | StartTlsOptions = {}, ms = 5000): Promise<void> {
    const { servername = 'localhost', maxVersion, minVersion = 'TLSv1.2', session, timeoutMs = ms } = typeof options === 'string' ? { servername: options } : options;
    this.resetReceived();
    this.write("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
    await this.waitFor(/<proceed\b/, timeoutMs);
    const plain = this.#socket;
    plain.removeAllListeners('data');
    plain.removeAllListeners('end');
    plain.removeAllListeners('close');
    const secure = tlsConnect({ socket: plain, servername, minVersion, session, ...(maxVersion ? { maxVersion } : {}) });
    secure.on('session', (ticket: Buffer) => (this.tlsSession = ticket));
    this.#socket = secure;
    this.#decoder = new TextDecoder('utf-8');
    this.#listen(secure);
    await new Promise<void>((resolve, reject) => {
      secure.once('secureConnect', () => resolve());
      secure.once('error', reject);
    });
    this.resetReceived();
  }

  /**
   * STARTTLS, SASL PLAIN and the stream restart, up to the features of the authenticated stream (where a
   * client binds a resource, or resumes a session with stream management).
   */
  async authenticate(user: string, password: string, options: { host?: string } = {}): Promise<void> {
    const host = options.host ?? 'localhost';
    await this.open({ to: host });
    await this.startTls();
    await this.open({ to: host });
    this.resetReceived();
    this.write(`<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>${Buffer.from(`\0${user}\0${password}`).toString('base64')}</auth>`);
    const outcome = await this.waitFor(/<success\b|<failure\b[\s\S]*?<\/failure>/);
    if (!outcome[0].startsWith('<success')) throw new Error(`authentication failed: ${outcome[0]}`);
    await this.open({ to: host });
    this.resetReceived();
  }

  /** authenticate, then resource binding; resolves with the bound full JID. */
  async login(user: string, password: string, options: { host?: string; resource?: string } = {}): Promise<string> {
    await this.authenticate(user, password, options);
    return this.bind(options.resource);
  }

  /** Resource binding on the authenticated, restarted stream; resolves with the bound full JID. */
  async bind(resource?: string): Promise<string> {
    this.resetReceived();
    this.write(`<iq type='set' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'>${resource ? `<resource>${resource}</resource>` : ''}</bind></iq>`);
    const jid = await this.waitFor(/<jid>([^<]+)<\/jid>/);
    this.resetReceived();
    return unescapeXml(jid[1]!);
  }

  /** Half-closes our side (FIN). */
  end(): void {
    this.#socket.end();
  }

  destroy(): void {
    this.#socket.destroy();
  }
}

/** A raw WebSocket peer (RFC 7395 framing is up to the test). */
export class RawWsPeer extends PeerBase {
  /** The WebSocket close code and reason, once closed. */
  closeCode: number | undefined;
  closeReason = '';

  private constructor(readonly ws: WebSocket) {
    super();
    ws.on('message', (data, isBinary) => this.onText(isBinary ? `[binary ${(data as Buffer).byteLength}]` : (data as Buffer).toString('utf8')));
    ws.on('close', (code, reason) => {
      this.closeCode = code;
      this.closeReason = reason.toString();
      this.onClosed();
    });
    ws.on('error', () => {});
  }

  /** Connects to ws://127.0.0.1:<port><path> with the `xmpp` subprotocol. */
  static connect(port: number, path = '/websocket', options: { maxPayload?: number } = {}): Promise<RawWsPeer> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, 'xmpp', { maxPayload: options.maxPayload ?? 64 * 1024 * 1024 });
      ws.once('open', () => {
        ws.off('error', reject);
        resolve(new RawWsPeer(ws));
      });
      ws.once('error', reject);
    });
  }

  /** Sends one message (a text frame unless `binary`). */
  send(data: string | Buffer, binary = false): boolean {
    if (this.isClosed || this.ws.readyState !== WebSocket.OPEN) return false;
    this.bytesWritten += typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
    this.ws.send(data, { binary });
    return true;
  }

  /** Sends `<open/>` and waits for the features. */
  async open(to = 'localhost', ms = 5000): Promise<string> {
    this.resetReceived();
    this.send(`<open xmlns='${NS_FRAMING}' to='${to}' version='1.0'/>`);
    return (await this.waitFor(FEATURES, ms))[0];
  }

  close(): void {
    this.ws.terminate();
  }
}
