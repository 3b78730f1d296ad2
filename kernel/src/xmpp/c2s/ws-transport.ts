/**
 * A client stream over WebSocket (RFC 7395): each message is one complete element, the stream opens with
 * <open/> and ends with <close/>, stanzas carry their namespace. Parsing uses the same hardened parser as
 * TCP, one element at a time.
 */
import type { WebSocket } from 'ws';
import { normalizeIp } from '../../access/ip.js';
import { NS } from '@service/plugin-api';
import type { ChannelBindingType } from '@service/plugin-api';
import { XmlElement, serialize, x } from '@service/plugin-api';
import { ParseError, parseElement, type StreamParserLimits } from '@service/plugin-api';
import type { Transport, TransportEvents } from './transport.js';
import type { ShaperDefinition } from '../../access/shaper-rules.js';
import { reshape, type Shaper } from './shaper.js';

const STANZAS = new Set(['message', 'presence', 'iq']);

export class WebSocketTransport implements Transport {
  readonly kind = 'websocket' as const;
  readonly canStartTls = false;
  readonly channelBindings: ChannelBindingType[] = [];
  #events: TransportEvents | undefined;
  #ended = false;
  /** Only on a shaped connection. */
  #shaper: Shaper | undefined;
  /** Messages read while the shaper paused reading (at most what one read of the socket brought). */
  #held: Array<[Buffer, boolean]> | undefined;

  constructor(
    private readonly socket: WebSocket,
    readonly ip: string,
    readonly port: number,
    readonly secure: boolean,
    private readonly limits: StreamParserLimits,
  ) {
    this.ip = normalizeIp(ip);
    socket.on('message', (data, isBinary) => {
      // Messages the WebSocket had already read when the shaper paused it wait for the pause to end.
      if (this.#shaper?.paused) (this.#held ??= []).push([data as Buffer, isBinary]);
      else this.#take(data as Buffer, isBinary);
    });
    socket.on('close', () => {
      this.#shaper?.dispose();
      this.#held = undefined;
      this.#events?.disconnected();
    });
    socket.on('error', () => {});
  }

  channelBinding(): Buffer | undefined {
    return undefined;
  }

  setEvents(events: TransportEvents): void {
    this.#events = events;
  }

  sendOpen(attrs: Record<string, string>): void {
    this.#send(serialize(x('open', { xmlns: NS.FRAMING, ...attrs })));
  }

  sendElement(element: XmlElement): void {
    let out = element;
    if (STANZAS.has(element.name) && element.attrs.xmlns === undefined) {
      out = new XmlElement(element.name, { xmlns: NS.CLIENT, ...element.attrs }, element.children, element.ns);
    } else if (element.name.startsWith('stream:') && element.attrs['xmlns:stream'] === undefined) {
      out = new XmlElement(element.name, { 'xmlns:stream': NS.STREAM, ...element.attrs }, element.children, element.ns);
    }
    this.#send(serialize(out));
  }

  sendClose(): void {
    this.#send(serialize(x('close', { xmlns: NS.FRAMING })));
  }

  restart(): void {}

  resume(): void {}

  startTls(): Promise<void> {
    return Promise.reject(new Error('STARTTLS is not available on WebSocket'));
  }

  setShaper(definition: ShaperDefinition | undefined): void {
    if (!definition && !this.#shaper) return;
    // Pausing the WebSocket pauses its TCP socket: the client is slowed by TCP's flow control.
    this.#shaper = reshape(this.#shaper, definition, {
      pause: () => this.socket.pause(),
      resume: () => {
        this.socket.resume();
        this.#release();
      },
    });
  }

  /** Handles held messages until the shaper pauses again. */
  #release(): void {
    const held = this.#held;
    while (held?.length && !this.#shaper?.paused) {
      const [data, isBinary] = held.shift()!;
      this.#take(data, isBinary);
    }
    if (held?.length === 0) this.#held = undefined;
  }

  #take(data: Buffer, isBinary: boolean): void {
    this.#shaper?.received(data.byteLength);
    this.#receive(data, isBinary);
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.socket.close(1000);
    setTimeout(() => this.socket.terminate(), 5000).unref();
  }

  #send(text: string): void {
    if (this.#ended || this.socket.readyState !== this.socket.OPEN) return;
    this.socket.send(text);
  }

  #receive(data: Buffer, isBinary: boolean): void {
    const events = this.#events;
    if (!events || this.#ended) return;
    if (isBinary) {
      events.error('bad-format', 'XMPP over WebSocket uses text messages');
      return;
    }
    if (data.byteLength > this.limits.maxStanzaSize) {
      events.error('policy-violation', `stanza larger than the server's limit of ${this.limits.maxStanzaSize} bytes`);
      return;
    }
    let element: XmlElement;
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(data);
    } catch {
      events.error('not-well-formed', 'the message is not valid UTF-8');
      return;
    }
    // A TCP-style stream header is never closed in its frame: name the real mistake, not the XML's.
    if (/^\s*(<\?xml[^>]*>\s*)?<stream:stream[\s>]/.test(text)) {
      events.error('invalid-namespace', 'XMPP over WebSocket opens with <open/> (RFC 7395), not <stream:stream>');
      return;
    }
    try {
      element = parseElement(text, this.limits);
    } catch (err) {
      if (!(err instanceof ParseError)) throw err;
      events.error(err.condition, err.message);
      return;
    }
    if (element.ns === NS.FRAMING && element.local === 'open') events.open(element.attrs, element.name, element.ns);
    else if (element.ns === NS.FRAMING && element.local === 'close') events.close();
    else if (element.name === 'stream:stream' || element.local === 'stream') events.error('invalid-namespace', 'XMPP over WebSocket opens with <open/> (RFC 7395), not <stream:stream>');
    else if (element.local === 'open' || element.local === 'close') {
      events.error('invalid-namespace', `<${element.local}/> must be in ${NS.FRAMING} (RFC 7395)`);
    } else events.element(element);
  }
}
