/**
 * A lean XMPP client for load generation: a raw socket, string searches instead of an XML parser, SCRAM-SHA-256
 * (with the salted password cached per salt and iteration count, as RFC 5802 §5.1 allows, so that thousands
 * of logins to accounts sharing one credential cost the generator a few HMACs each), optional STARTTLS on
 * the same socket, resource binding, and then one-to-one chat messages carrying a send timestamp.
 *
 * It trusts the server to speak well-formed XMPP: it looks for the closing tags it waits for, nothing more.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type SecureContext, type TLSSocket } from 'node:tls';

export interface ClientOptions {
  port: number;
  host?: string;
  /** The XMPP domain. */
  domain: string;
  user: string;
  password: string;
  resource: string;
  localAddress?: string;
  /** STARTTLS before authenticating, verifying the certificate against `secureContext`'s CA as `domain`. */
  tls?: { secureContext: SecureContext };
  timeoutMs?: number;
}

export interface LoginTimes {
  /** From the start of the TCP connect to the bind result, in ms. */
  totalMs: number;
}

/** A received chat message: its body and the time it was fully read (performance.timeOrigin + performance.now()). */
export type MessageHandler = (body: string, at: number) => void;

const HEADER = (domain: string) => `<?xml version='1.0'?><stream:stream to='${domain}' version='1.0' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>`;
const NS_SASL = 'urn:ietf:params:xml:ns:xmpp-sasl';

/** ClientKey, StoredKey and ServerKey for a password, salt and iteration count (PBKDF2 runs once per triple). */
const keyCache = new Map<string, { clientKey: Buffer; storedKey: Buffer; serverKey: Buffer }>();
function scramKeys(password: string, salt: string, iterations: number): { clientKey: Buffer; storedKey: Buffer; serverKey: Buffer } {
  const key = `${iterations}:${salt}:${password}`;
  let keys = keyCache.get(key);
  if (!keys) {
    const salted = pbkdf2Sync(password.normalize('NFKC'), Buffer.from(salt, 'base64'), iterations, 32, 'sha256');
    const clientKey = createHmac('sha256', salted).update('Client Key').digest();
    keys = { clientKey, storedKey: createHash('sha256').update(clientKey).digest(), serverKey: createHmac('sha256', salted).update('Server Key').digest() };
    keyCache.set(key, keys);
  }
  return keys;
}

export function now(): number {
  return performance.timeOrigin + performance.now();
}

export class BenchClient {
  #socket!: Socket | TLSSocket;
  #buffer = '';
  /** Resolves a pending `#expect`. */
  #waiting: { marker: RegExp | string; resolve: (text: string) => void; reject: (err: Error) => void } | undefined;
  #closed = false;
  #closedPromise!: Promise<void>;
  #onMessage: MessageHandler | undefined;
  /** Messages received (complete `</message>` elements) since login. */
  received = 0;
  jid = '';

  constructor(readonly options: ClientOptions) {}

  get closed(): boolean {
    return this.#closed;
  }

  /** Connects, negotiates (STARTTLS if asked, SCRAM-SHA-256, bind) and resolves once the resource is bound. */
  async login(): Promise<LoginTimes> {
    const started = now();
    const o = this.options;
    const timer = setTimeout(() => this.#fail(new Error(`login of ${o.user} timed out`)), o.timeoutMs ?? 60_000);
    try {
      await this.#connect();
      this.#write(HEADER(o.domain));
      await this.#expect(/<\/stream:features>|<stream:features\/>/);
      if (o.tls) {
        this.#write("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
        await this.#expect('<proceed');
        await this.#startTls(o.tls.secureContext);
        this.#write(HEADER(o.domain));
        await this.#expect(/<\/stream:features>|<stream:features\/>/);
      }
      const nonce = randomBytes(18).toString('base64');
      const clientFirstBare = `n=${o.user},r=${nonce}`;
      this.#write(`<auth xmlns='${NS_SASL}' mechanism='SCRAM-SHA-256'>${Buffer.from(`n,,${clientFirstBare}`).toString('base64')}</auth>`);
      const challenge = await this.#expect(/<\/challenge>|<\/failure>/);
      if (!challenge.includes('<challenge')) throw new Error(`SASL failed for ${o.user}: ${challenge}`);
      const serverFirst = Buffer.from(elementText(challenge, 'challenge'), 'base64').toString();
      const attrs = new Map(serverFirst.split(',').map((p) => [p[0]!, p.slice(2)]));
      const r = attrs.get('r')!;
      if (!r.startsWith(nonce)) throw new Error('SCRAM: the server nonce does not extend ours');
      const keys = scramKeys(o.password, attrs.get('s')!, Number(attrs.get('i')));
      const withoutProof = `c=biws,r=${r}`;
      const authMessage = `${clientFirstBare},${serverFirst},${withoutProof}`;
      const signature = createHmac('sha256', keys.storedKey).update(authMessage).digest();
      const proof = Buffer.alloc(32);
      for (let i = 0; i < 32; i++) proof[i] = keys.clientKey[i]! ^ signature[i]!;
      this.#write(`<response xmlns='${NS_SASL}'>${Buffer.from(`${withoutProof},p=${proof.toString('base64')}`).toString('base64')}</response>`);
      const outcome = await this.#expect(/<\/success>|<success[^>]*\/>|<\/failure>/);
      if (!outcome.includes('<success')) throw new Error(`SASL failed for ${o.user}: ${outcome}`);
      const verifier = Buffer.from(elementText(outcome, 'success'), 'base64').toString();
      const expected = createHmac('sha256', keys.serverKey).update(authMessage).digest();
      if (!verifier.startsWith('v=') || !timingSafeEqual(Buffer.from(verifier.slice(2), 'base64'), expected)) throw new Error('SCRAM: wrong server signature');
      this.#write(HEADER(o.domain));
      await this.#expect(/<\/stream:features>|<stream:features\/>/);
      this.#write(`<iq type='set' id='bind'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>${o.resource}</resource></bind></iq>`);
      const bound = await this.#expect('</iq>');
      if (!bound.includes('<jid>')) throw new Error(`bind failed for ${o.user}: ${bound}`);
      this.jid = between(bound, '<jid>', '</jid>');
      return { totalMs: now() - started };
    } finally {
      clearTimeout(timer);
    }
  }

  /** From now on, every complete message is handed to `handler` (its body text). */
  onMessage(handler: MessageHandler): void {
    this.#onMessage = handler;
    this.#drainMessages();
  }

  /** Sends a chat message; false when the connection is gone. */
  send(to: string, body: string): boolean {
    if (this.#closed) return false;
    this.#socket.write(`<message to='${to}' type='chat'><body>${body}</body></message>`);
    return true;
  }

  /** Closes the stream and waits for the server to close the connection (at most `ms`). */
  async close(ms = 10_000): Promise<void> {
    if (this.#closed) return;
    this.#socket.end('</stream:stream>');
    const timer = setTimeout(() => this.#socket.destroy(), ms);
    await this.#closedPromise;
    clearTimeout(timer);
  }

  destroy(): void {
    this.#socket?.destroy();
  }

  #connect(): Promise<void> {
    const o = this.options;
    return new Promise((resolve, reject) => {
      const socket = netConnect({ port: o.port, host: o.host ?? '127.0.0.1', localAddress: o.localAddress });
      socket.setNoDelay(true);
      this.#socket = socket;
      this.#closedPromise = new Promise((done) => socket.once('close', () => done()));
      socket.once('connect', () => resolve());
      socket.once('error', reject);
      this.#listen(socket);
    });
  }

  #startTls(secureContext: SecureContext): Promise<void> {
    const plain = this.#socket as Socket;
    plain.removeAllListeners('data');
    plain.removeAllListeners('close');
    plain.removeAllListeners('error');
    return new Promise((resolve, reject) => {
      const secure = tlsConnect({ socket: plain, servername: this.options.domain, secureContext }, () => resolve());
      secure.setNoDelay(true);
      secure.once('error', reject);
      this.#socket = secure;
      this.#closedPromise = new Promise((done) => secure.once('close', () => done()));
      this.#listen(secure);
    });
  }

  #listen(socket: Socket): void {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      if (this.#waiting) this.#check();
      else if (this.#onMessage) this.#drainMessages();
      else if (this.#buffer.length > 1 << 20) this.#buffer = '';
    });
    socket.on('close', () => {
      this.#closed = true;
      this.#fail(new Error(`connection of ${this.options.user} closed; last received: ${this.#buffer.slice(-300)}`));
    });
    socket.on('error', () => {});
  }

  #write(text: string): void {
    this.#socket.write(text);
  }

  /** Waits for `marker` and returns (and consumes) everything received up to its end. */
  #expect(marker: RegExp | string): Promise<string> {
    return new Promise((resolve, reject) => {
      if (this.#closed) return reject(new Error(`connection of ${this.options.user} closed; last received: ${this.#buffer.slice(-300)}`));
      this.#waiting = { marker, resolve, reject };
      this.#check();
    });
  }

  #check(): void {
    const waiting = this.#waiting!;
    let end = -1;
    if (typeof waiting.marker === 'string') {
      const at = this.#buffer.indexOf(waiting.marker);
      if (at !== -1) end = at + waiting.marker.length;
    } else {
      const m = waiting.marker.exec(this.#buffer);
      if (m) end = m.index + m[0].length;
    }
    if (end === -1) {
      if (this.#buffer.includes('</stream:error>')) this.#fail(new Error(`stream error: ${this.#buffer.slice(0, 500)}`));
      return;
    }
    const text = this.#buffer.slice(0, end);
    this.#buffer = this.#buffer.slice(end);
    this.#waiting = undefined;
    waiting.resolve(text);
  }

  #fail(err: Error): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.reject(err);
    if (!this.#closed) this.#socket?.destroy();
  }

  #drainMessages(): void {
    const handler = this.#onMessage!;
    let start = 0;
    for (;;) {
      const end = this.#buffer.indexOf('</message>', start);
      if (end === -1) break;
      const at = now();
      const open = this.#buffer.indexOf('<body>', start);
      if (open !== -1 && open < end) handler(this.#buffer.slice(open + 6, this.#buffer.indexOf('</body>', open)), at);
      this.received++;
      start = end + 10;
    }
    if (start > 0) this.#buffer = this.#buffer.slice(start);
  }
}

/** The text content of the first `<name …>text</name>` in `text` ('' when it is empty or absent). */
function elementText(text: string, name: string): string {
  const open = text.indexOf(`<${name}`);
  if (open === -1) return '';
  const start = text.indexOf('>', open);
  if (text[start - 1] === '/') return '';
  const end = text.indexOf(`</${name}>`, start);
  return end === -1 ? '' : text.slice(start + 1, end);
}

function between(text: string, open: string, close: string): string {
  const from = text.indexOf(open);
  const to = text.indexOf(close, from + open.length);
  return from === -1 || to === -1 ? '' : text.slice(from + open.length, to);
}
