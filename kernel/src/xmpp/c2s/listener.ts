/**
 * The `service_c2s` listener: TCP with STARTTLS (required by default), or TLS from the first byte when
 * the listener says `tls: true`. Each connection becomes a client stream; on shutdown every stream gets a
 * <system-shutdown/> stream error. The listener's `shaper` shapes what each client sends (shaper.ts, chosen
 * in stream.ts), and `max_connection_rate` refuses an address that opens connections too fast.
 */
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import type { C2sListenerConfig } from '../../config/listeners.js';
import { listen } from '../../http/listener.js';
import { listenOnOwnSocket } from '../../workers/own-socket.js';
import { StreamError } from '@service/plugin-api';
import { normalizeIp } from '../../access/ip.js';
import type { CertificateStore } from '../tls/certificates.js';
import { DEFAULT_LIMITS } from '@service/plugin-api';
import { C2SStream, type C2SEnvironment } from './stream.js';
import { TcpTransport, type TlsSettings } from './tcp-transport.js';
import { ConnectionRate } from './connection-rate.js';

export interface RunningC2sListener {
  port(): number;
  close(): Promise<void>;
}

const MAX_AUTH_FAILURES = 5;

export async function startC2sListener(config: C2sListenerConfig, env: C2SEnvironment, certificates: CertificateStore): Promise<RunningC2sListener> {
  const limits = { maxStanzaSize: config.max_stanza_size, maxDepth: DEFAULT_LIMITS.maxDepth };
  const tls: TlsSettings = { context: certificates.defaultContext, sniContext: (name) => certificates.contextFor(name) };
  const options = {
    starttls: config.starttls,
    starttlsRequired: config.starttls_required,
    access: config.access,
    negotiationTimeoutMs: config.negotiation_timeout * 1000,
    maxAuthFailures: MAX_AUTH_FAILURES,
    shaper: config.shaper,
  };
  const rate = new ConnectionRate(config.max_connection_rate);
  const streams = new Set<C2SStream>();
  const sockets = new Set<Socket>();
  const accept = (socket: Socket, directTls: boolean) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    const stream = new C2SStream(new TcpTransport(socket, limits, tls, directTls), env, options);
    // Refused at once, with the stream error, before the client can cost anything more.
    if (!rate.admit(normalizeIp(socket.remoteAddress ?? ''))) {
      env.logger.info({ ip: socket.remoteAddress, port: config.port }, 'connection refused: %s', rate.refusal());
      stream.close(new StreamError('policy-violation', rate.refusal()));
    }
    streams.add(stream);
    socket.once('close', () => {
      streams.delete(stream);
      sockets.delete(socket);
    });
  };
  let server: Server;
  if (config.tls) {
    server = createTlsServer({ secureContext: certificates.defaultContext, SNICallback: (name, cb) => cb(null, certificates.contextFor(name)) }, (socket) => accept(socket, true));
    // A failed handshake is the client's problem, not the server's.
    server.on('tlsClientError', () => {});
  } else {
    server = createNetServer((socket) => accept(socket, false));
  }
  // A worker accepts its own clients (a login is a new connection: no hand-over by the primary each time).
  if (!(await listenOnOwnSocket(server, config.port, config.ip))) await listen(server, config.port, config.ip);
  return {
    port: () => (server.address() as { port: number }).port,
    close: async () => {
      rate.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const stream of streams) stream.close(new StreamError('system-shutdown', 'the server is stopping'));
      setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, 2000).unref();
      await closed;
    },
  };
}
