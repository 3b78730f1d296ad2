/**
 * A client stream over TCP: the XML document framing of RFC 6120 on the stream parser, STARTTLS in place,
 * or TLS from the first byte on a direct-TLS port.
 */
import { createHash } from 'node:crypto';
import type { Socket } from 'node:net';
import { TLSSocket, type SecureContext } from 'node:tls';
import { normalizeIp } from '../../access/ip.js';
import { NS } from '@service/plugin-api';
import type { ChannelBindingType } from '@service/plugin-api';
import { serialize, escapeAttr, type XmlElement } from '@service/plugin-api';
import { StreamParser, namespaceDeclarations, type StreamParserLimits } from '@service/plugin-api';
import { quietParsers, type QuietCandidate, type QuietParsers } from './quiet-parsers.js';
import type { Transport, TransportEvents } from './transport.js';
import type { ShaperDefinition } from '../../access/shaper-rules.js';
import { reshape, type Shaper } from './shaper.js';

/** A client that stops reading while we keep writing is dropped past this many buffered bytes. */
const MAX_BUFFERED = 8 * 1024 * 1024;

export interface TlsSettings {
  readonly context: SecureContext;
  readonly sniContext: (servername: string) => SecureContext | undefined;
}

export class TcpTransport implements Transport, QuietCandidate {
  readonly ip: string;
  readonly port: number;
  #socket: Socket;
  /** Undefined while the connection is quiet (quiet-parsers.ts): the next bytes get a continued parser. */
  #parser: StreamParser | undefined;
  /** Bytes to text, for the whole connection: a character may span chunks, and parsers change on restarts. */
  #decoder: InstanceType<typeof TextDecoder> | undefined = new TextDecoder('utf-8', { fatal: true });
  /** The current stream header's namespace declarations, for a parser that continues the stream. */
  #declarations: Record<string, string> | undefined;
  #heard = false;
  /** The last byte received: a multi-byte character may be half in the decoder when it is 0x80 or more. */
  #lastByte = 0;
  #events: TransportEvents | undefined;
  #secure: boolean;
  #ended = false;
  #destroyTimer?: NodeJS.Timeout;
  /** Only on a shaped connection. */
  #shaper: Shaper | undefined;
  /** Our own listeners on the current socket, removed one by one at STARTTLS: others (the listener's) stay. */
  readonly #onData = (chunk: Buffer) => this.#receive(chunk);
  readonly #onClose = () => {
    clearTimeout(this.#destroyTimer);
    this.#shaper?.dispose();
    this.quiet.unwatch(this);
    this.#events?.disconnected();
  };
  readonly #onError = () => {};

  constructor(
    socket: Socket,
    private readonly limits: StreamParserLimits,
    private readonly tls: TlsSettings | undefined,
    directTls: boolean,
    /** The process's sweeper; tests give their own, to sweep when they choose. */
    private readonly quiet: QuietParsers = quietParsers,
  ) {
    this.#socket = socket;
    this.#secure = directTls;
    this.ip = normalizeIp(socket.remoteAddress ?? '');
    this.port = socket.remotePort ?? 0;
    this.#listen(socket);
    this.restart();
    this.quiet.watch(this);
  }

  get kind(): 'c2s' | 'c2s_tls' {
    return this.#secure ? 'c2s_tls' : 'c2s';
  }

  get secure(): boolean {
    return this.#secure;
  }

  get canStartTls(): boolean {
    return !this.#secure && this.tls !== undefined;
  }

  get channelBindings(): ChannelBindingType[] {
    if (!(this.#socket instanceof TLSSocket)) return [];
    return this.#socket.getProtocol() === 'TLSv1.3' ? ['tls-exporter', 'tls-server-end-point'] : ['tls-unique', 'tls-server-end-point'];
  }

  channelBinding(type: ChannelBindingType): Buffer | undefined {
    const socket = this.#socket;
    if (!(socket instanceof TLSSocket)) return undefined;
    const tls13 = socket.getProtocol() === 'TLSv1.3';
    if (type === 'tls-exporter') {
      // RFC 9266: defined for TLS 1.3 only (TLS 1.2 exporters are unsafe without extended master secret).
      return tls13 ? socket.exportKeyingMaterial(32, 'EXPORTER-Channel-Binding', Buffer.alloc(0)) : undefined;
    }
    if (type === 'tls-unique') {
      // RFC 5929 §3: the first Finished message of the latest handshake. The client sends it first in a full
      // handshake, the server in an abbreviated (resumed) one. TLS 1.3 has no such value (RFC 8446 §C.5).
      if (tls13) return undefined;
      return (socket.isSessionReused() ? socket.getFinished() : socket.getPeerFinished()) ?? undefined;
    }
    const certificate = socket.getCertificate() as { raw?: Buffer } | null;
    return certificate?.raw ? createHash(endPointHash(certificate.raw)).update(certificate.raw).digest() : undefined;
  }

  setEvents(events: TransportEvents): void {
    this.#events = events;
  }

  sendOpen(attrs: Record<string, string>): void {
    let header = `<?xml version='1.0'?><stream:stream xmlns='${NS.CLIENT}' xmlns:stream='${NS.STREAM}'`;
    for (const [name, value] of Object.entries(attrs)) header += ` ${name}='${escapeAttr(value)}'`;
    this.#write(`${header}>`);
  }

  sendElement(element: XmlElement): void {
    this.#write(serialize(element));
  }

  sendClose(): void {
    this.#write('</stream:stream>');
  }

  restart(): void {
    this.#replaceParser(false);
  }

  resume(): void {
    if (this.#parser?.holding) this.#replaceParser(true);
  }

  heardSinceLastSweep(): boolean {
    const heard = this.#heard;
    this.#heard = false;
    return heard;
  }

  releaseParser(): boolean {
    if (this.#ended || !this.#parser?.atRest || this.#lastByte >= 0x80) return false;
    this.#parser = undefined;
    this.#decoder = undefined;
    return true;
  }

  /**
   * A new parser for a restarted stream (or, `continued`, for the same stream after a held element);
   * it first gets whatever the old one held back, pipelined by the client.
   */
  #replaceParser(continued: boolean): void {
    const held = this.#parser?.takeHeld();
    const events = (): TransportEvents | undefined => this.#events;
    this.#parser = new StreamParser(
      {
        streamStart: (name, attrs, ns) => {
          this.#declarations = namespaceDeclarations(attrs);
          events()?.open(attrs, name, ns);
        },
        element: (element) => events()?.element(element),
        streamEnd: () => events()?.close(),
        error: (condition, text) => events()?.error(condition, text),
      },
      this.limits,
      // What follows a SASL element may be a restarted stream (XEP-0305 pipelining): hold it.
      {
        holdAfter: (element) => element.ns === NS.SASL && (element.local === 'auth' || element.local === 'response'),
        continued,
        declarations: continued ? this.#declarations : undefined,
      },
    );
    if (held) this.#parser.writeText(held);
  }

  async startTls(): Promise<void> {
    if (!this.tls) throw new Error('TLS is not configured');
    // <proceed/> goes out in plaintext, before the socket turns into TLS.
    this.#flush();
    const plain = this.#socket;
    plain.off('data', this.#onData);
    plain.off('close', this.#onClose);
    plain.off('error', this.#onError);
    const secure = new TLSSocket(plain, {
      isServer: true,
      secureContext: this.tls.context,
      SNICallback: (servername, callback) => callback(null, this.tls!.sniContext(servername) ?? this.tls!.context),
    });
    this.#socket = secure;
    // A shaper's pause goes on over TLS (the handshake still runs: only the stream's data waits).
    if (this.#shaper?.paused) secure.pause();
    this.#listen(secure);
    // Plaintext that came after <starttls/> is not part of the TLS stream: drop it with the old parser.
    this.#parser?.takeHeld();
    this.#decoder = new TextDecoder('utf-8', { fatal: true });
    this.#parser = new StreamParser({ streamStart: () => {}, element: () => {}, streamEnd: () => {}, error: () => {} });
    await new Promise<void>((resolve, reject) => {
      secure.once('secure', () => resolve());
      secure.once('error', reject);
    });
    this.#secure = true;
    this.restart();
  }

  setShaper(definition: ShaperDefinition | undefined): void {
    if (!definition && !this.#shaper) return;
    // Pauses and resumes whichever socket carries the stream then (plain, or TLS after STARTTLS).
    this.#shaper = reshape(this.#shaper, definition, {
      pause: () => this.#socket.pause(),
      resume: () => {
        if (!this.#socket.destroyed) this.#socket.resume();
      },
    });
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#parser?.end();
    this.#flush();
    this.#socket.end();
    // A peer that never closes its side must not keep the socket forever.
    this.#destroyTimer = setTimeout(() => this.#socket.destroy(), 5000).unref();
  }

  #listen(socket: Socket): void {
    socket.on('data', this.#onData);
    socket.on('close', this.#onClose);
    socket.on('error', this.#onError);
  }

  #receive(chunk: Buffer): void {
    if (this.#ended) return;
    this.#heard = true;
    this.#lastByte = chunk[chunk.length - 1] ?? 0;
    if (!this.#parser) {
      // A quiet connection speaks again: a parser continues its stream where the dropped one stood.
      this.#replaceParser(true);
      this.quiet.watch(this);
    }
    let text: string;
    try {
      text = (this.#decoder ??= new TextDecoder('utf-8', { fatal: true })).decode(chunk, { stream: true });
    } catch {
      this.#events?.error('not-well-formed', 'the stream is not valid UTF-8');
      return;
    }
    this.#parser!.writeText(text, chunk.byteLength);
    this.#shaper?.received(chunk.byteLength);
  }

  /**
   * What is written in one turn of the event loop leaves in one system call: the socket is corked at the
   * first write and uncorked once the turn's callbacks and promises have run (a login's header and
   * features, a burst of messages to one client). Each write is its own system call otherwise, and on
   * loopback that call also carries the receiver's side of TCP.
   */
  #write(text: string): void {
    const socket = this.#socket;
    if (this.#ended || socket.destroyed) return;
    if (!this.#corked) {
      this.#corked = true;
      socket.cork();
      setImmediate(this.#flush);
    }
    socket.write(text);
    if (socket.writableLength > MAX_BUFFERED) socket.destroy();
  }

  #corked = false;

  /** Sends what the turn wrote (also before STARTTLS switches sockets, and at the end). */
  readonly #flush = (): void => {
    if (!this.#corked) return;
    this.#corked = false;
    this.#socket.uncork();
  };
}

/** RFC 5929: the certificate's signature hash, with MD5 and SHA-1 replaced by SHA-256. */
function endPointHash(der: Buffer): 'sha256' | 'sha384' | 'sha512' {
  const has = (hex: string) => der.includes(Buffer.from(hex, 'hex'));
  // ecdsa-with-SHA384/512 and sha384/512WithRSAEncryption object identifiers.
  if (has('06082a8648ce3d040303') || has('06092a864886f70d01010c')) return 'sha384';
  if (has('06082a8648ce3d040304') || has('06092a864886f70d01010d')) return 'sha512';
  return 'sha256';
}
