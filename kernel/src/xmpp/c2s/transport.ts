/**
 * What carries a client stream: TCP (with STARTTLS, or direct TLS) or WebSocket (RFC 7395). The stream
 * logic is the same for both; only framing differs (a <stream:stream> document versus one element per
 * WebSocket message with <open/> and <close/>), and that lives here.
 */
import type { ParseErrorCondition } from '@service/plugin-api';
import type { XmlElement } from '@service/plugin-api';
import type { ChannelBindingType } from '@service/plugin-api';
import type { ConnectionKind } from '../sm/session.js';
import type { ShaperDefinition } from '../../access/shaper-rules.js';

export interface TransportEvents {
  /** The client opened (or reopened) the stream: the header's (or <open/>'s) attributes. */
  open(attrs: Record<string, string>, name: string, ns: string | undefined): void;
  element(element: XmlElement): void;
  /** The client closed the stream (</stream:stream> or <close/>). */
  close(): void;
  /** Input the stream cannot accept. */
  error(condition: ParseErrorCondition | 'bad-format' | 'invalid-namespace', text: string): void;
  /** The connection is gone. */
  disconnected(): void;
}

export interface Transport {
  readonly kind: ConnectionKind;
  readonly ip: string;
  readonly port: number;
  readonly secure: boolean;
  readonly canStartTls: boolean;
  readonly channelBindings: readonly ChannelBindingType[];
  channelBinding(type: ChannelBindingType): Buffer | undefined;
  setEvents(events: TransportEvents): void;
  /** Opens the server's side of the stream. */
  sendOpen(attrs: Record<string, string>): void;
  sendElement(element: XmlElement): void;
  /** Closes the server's side of the stream (the connection stays until `end`). */
  sendClose(): void;
  /** Expects a new stream header (after STARTTLS or SASL). */
  restart(): void;
  /** Goes on with the same stream after a SASL element that did not end in a restart. */
  resume(): void;
  /** Upgrades to TLS in place, after <proceed/> was sent. */
  startTls(): Promise<void>;
  /** Shapes what the client sends from now on (shaper.ts); undefined reads at full speed. */
  setShaper(definition: ShaperDefinition | undefined): void;
  /** Ends the connection once what was written is flushed. */
  end(): void;
}
