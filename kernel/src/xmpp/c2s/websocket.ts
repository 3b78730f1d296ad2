/**
 * XMPP over WebSocket (RFC 7395) on an HTTP listener: `request_handlers: {/websocket: service_http_ws}`.
 * The upgrade must ask for the `xmpp` subprotocol; each connection then becomes a client stream like a TCP
 * one, with WebSocket framing. The HTTP listener's `shaper` and `max_connection_rate` apply to these streams.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { HttpListenerConfig } from '../../config/listeners.js';
import type { HttpRequestHandler } from '@service/plugin-api';
import { sendError } from '@service/plugin-api';
import { StreamError } from '@service/plugin-api';
import { DEFAULT_LIMITS } from '@service/plugin-api';
import { C2SStream, type C2SEnvironment, type C2SStreamOptions } from './stream.js';
import { WebSocketTransport } from './ws-transport.js';
import { ConnectionRate } from './connection-rate.js';
import { normalizeIp } from '../../access/ip.js';

export const WEBSOCKET_HANDLER = 'service_http_ws';

export interface WebSocketEndpoint {
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, listener: HttpListenerConfig): void;
  /** For plain HTTP requests on the WebSocket path. */
  http: HttpRequestHandler;
  close(): void;
}

export function webSocketEndpoint(env: C2SEnvironment, options: () => { maxStanzaSize: number; access: string; negotiationTimeoutMs: number }): WebSocketEndpoint {
  const server = new WebSocketServer({
    noServer: true,
    // A frame over max_stanza_size gets the policy-violation stream error; one far over it (8×, 2 MiB at the
    // default) is not even buffered: the socket closes with 1009 (message too big).
    maxPayload: Math.max(8 * options().maxStanzaSize, 1 << 20),
    handleProtocols: (protocols) => (protocols.has('xmpp') ? 'xmpp' : false),
  });
  const streams = new Set<C2SStream>();
  /** Per listener (a reload brings new listener objects, and so new counts). */
  const rates = new WeakMap<HttpListenerConfig, ConnectionRate>();
  return {
    upgrade(request, socket, head, listener) {
      const perMinute = listener.max_connection_rate ?? Infinity;
      if (Number.isFinite(perMinute)) {
        let rate = rates.get(listener);
        if (!rate) rates.set(listener, (rate = new ConnectionRate(perMinute)));
        if (!rate.admit(normalizeIp(request.socket.remoteAddress ?? ''))) {
          env.logger.info({ ip: request.socket.remoteAddress }, 'WebSocket connection refused: %s', rate.refusal());
          socket.end(`HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nRetry-After: 60\r\nContent-Type: text/plain\r\n\r\n${rate.refusal()}\n`);
          return;
        }
      }
      const protocols = String(request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
      if (!protocols.includes('xmpp')) {
        socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\nXMPP over WebSocket needs the subprotocol "xmpp" (RFC 7395)\n');
        return;
      }
      server.handleUpgrade(request, socket, head, (ws) => {
        const current = options();
        const limits = { maxStanzaSize: current.maxStanzaSize, maxDepth: DEFAULT_LIMITS.maxDepth };
        const secure = Boolean(listener.tls) || (request.socket as { encrypted?: boolean }).encrypted === true;
        const transport = new WebSocketTransport(ws, request.socket.remoteAddress ?? '', request.socket.remotePort ?? 0, secure, limits);
        const streamOptions: C2SStreamOptions = {
          starttls: false,
          starttlsRequired: false,
          access: current.access,
          negotiationTimeoutMs: current.negotiationTimeoutMs,
          maxAuthFailures: 5,
          shaper: listener.shaper ?? 'none',
        };
        const stream = new C2SStream(transport, env, streamOptions);
        streams.add(stream);
        ws.once('close', () => streams.delete(stream));
      });
    },
    http: async (ctx) => {
      ctx.set('Upgrade', 'websocket');
      sendError(ctx, 'bad_request', 'this is the XMPP over WebSocket endpoint (RFC 7395): connect with a WebSocket and the subprotocol "xmpp"');
      ctx.status = 426;
    },
    close() {
      for (const stream of streams) stream.close(new StreamError('system-shutdown', 'the server is stopping'));
      server.close();
    },
  };
}
