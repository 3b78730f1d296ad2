/**
 * The `service_http` listener: a koa application that gives each request an id, matches it with @koa/router
 * to the handler mounted at the longest matching request_handlers prefix (mounts.ts), and turns anything a
 * handler lets escape into a JSON error (a 500 only for genuine faults, logged with the request id).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import Koa from 'koa';
import { asCommandError } from '@service/plugin-api';
import type { HttpListenerConfig } from '../config/listeners.js';
import { normalizeIp } from '../access/ip.js';
import type { Logger } from '../log/logger.js';
import { HttpHandlerRegistry } from './handlers.js';
import { ListenerRoutes } from './mounts.js';
import { sendCommandError, sendError } from '@service/plugin-api';
import type { HttpContext, HttpServerApi, HttpState } from '@service/plugin-api';

/** Request ids: a per-process random prefix and a counter; unique, short, cheap. */
const idPrefix = randomBytes(4).toString('hex');
let idCounter = 0;
export function nextRequestId(): string {
  idCounter = (idCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `${idPrefix}-${idCounter.toString(36)}`;
}

/** The peer address of a connection, normalized once: keep-alive connections carry many requests. */
const peerAddresses = new WeakMap<Socket, string>();
function peerAddress(socket: Socket): string {
  let ip = peerAddresses.get(socket);
  if (ip === undefined) {
    ip = normalizeIp(socket.remoteAddress ?? '');
    peerAddresses.set(socket, ip);
  }
  return ip;
}

export function createHttpApp(config: HttpListenerConfig, handlers: HttpHandlerRegistry, logger: Logger): { app: Koa<HttpState>; routes: ListenerRoutes } {
  const app = new Koa<HttpState>({ proxy: false });
  const customHeaders = Object.entries(config.custom_headers);
  const routes = new ListenerRoutes(config.request_handlers, async (ctx, { mount, segments }) => {
    const http = ctx as HttpContext;
    const state = ctx.state as { -readonly [K in keyof HttpState]: HttpState[K] };
    if (!segments) {
      sendError(http, 'bad_request', 'the URL path is not valid percent-encoded UTF-8');
      return;
    }
    state.mount = mount.prefix;
    state.segments = segments;
    const handler = handlers.get(mount.handler);
    if (!handler) {
      sendError(http, 'unavailable', `the request handler ${mount.handler} for ${mount.prefix} is not running`);
      return;
    }
    try {
      await handler(http);
    } catch (err) {
      const known = asCommandError(err);
      if (known && known.kind !== 'internal') {
        sendCommandError(http, known);
        return;
      }
      logger.error({ err, requestId: state.requestId, path: ctx.path }, 'internal error in request handler %s', mount.handler);
      sendError(http, 'internal', `internal error (request id ${state.requestId})`);
    }
  });

  app.use(async (ctx, next) => {
    const requestId = nextRequestId();
    ctx.set('X-Request-Id', requestId);
    for (const [name, value] of customHeaders) ctx.set(name, value);
    const state = ctx.state as { -readonly [K in keyof HttpState]: HttpState[K] };
    state.requestId = requestId;
    state.ip = peerAddress(ctx.req.socket);
    state.listener = config;
    await next();
  });
  app.use(routes.middleware());
  app.use((ctx) => sendError(ctx as HttpContext, 'not_found', `nothing is served at ${ctx.path}`));
  // koa's own error event (socket errors, aborted requests): log quietly, never crash.
  app.on('error', (err: Error) => logger.debug({ err }, 'http listener error'));
  return { app, routes };
}

export interface RunningHttpListener {
  readonly config: HttpListenerConfig;
  readonly server: Server;
  port(): number;
  close(): Promise<void>;
}

/** Reads a PEM file holding the certificate chain and its private key. */
function readPem(file: string): { cert: string; key: string } {
  const pem = readFileSync(file, 'utf8');
  const key = /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----[\s\S]+?-----END (?:[A-Z]+ )?PRIVATE KEY-----/.exec(pem)?.[0];
  if (!key) throw new Error(`${file} holds no private key`);
  return { cert: pem, key };
}

export async function startHttpListener(
  config: HttpListenerConfig,
  handlers: HttpHandlerRegistry,
  logger: Logger,
  certfile: string | undefined,
): Promise<RunningHttpListener> {
  const { app, routes } = createHttpApp(config, handlers, logger);
  let server: Server;
  const timeouts = requestTimeouts(config.request_timeout);
  if (config.tls) {
    if (!certfile) throw new Error(`listener on port ${config.port}: tls is on but no certfile is configured`);
    server = createHttpsServer({ ...readPem(certfile), ...timeouts }, app.callback());
  } else server = createHttpServer(timeouts, app.callback());
  server.on('upgrade', (request: import('node:http').IncomingMessage, socket: import('node:stream').Duplex, head: Buffer) => {
    const mount = routes.mountFor(new URL(request.url ?? '/', 'http://x').pathname);
    const upgrade = mount && handlers.upgrade(mount.handler);
    if (!upgrade) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    upgrade(request, socket, head, config);
  });
  server.keepAliveTimeout = 65_000;
  await listen(server, config.port, config.ip);
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return {
    config,
    server,
    port: () => (server.address() as import('node:net').AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive connections would hold close() open; in-flight requests finish first.
        server.closeIdleConnections();
        setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, 2000).unref();
      }),
  };
}

/**
 * `services.httpServer`: the kernel's HTTP stack with one mount, at /, for a module's own listener kind (XML-RPC
 * on its own port); TLS from the listener's certfile or the server's first one.
 */
export function singleHandlerServer(logger: Logger, defaultCertfile: () => string | undefined): HttpServerApi {
  return {
    serve: async (config, handler) => {
      const handlers = new HttpHandlerRegistry();
      handlers.register('serve', handler, config.module);
      const listener = { ...config, request_handlers: { '/': 'serve' }, custom_headers: {} } as unknown as HttpListenerConfig;
      const http = await startHttpListener(listener, handlers, logger, config.certfile ?? defaultCertfile());
      return { port: () => http.port(), close: () => http.close() };
    },
  };
}

/** Whether listening on `ip` failed only because the host has no IPv6: '::' then falls back to 0.0.0.0. */
export function lacksIpv6(ip: string, err: NodeJS.ErrnoException): boolean {
  return ip === '::' && (err.code === 'EAFNOSUPPORT' || err.code === 'EADDRNOTAVAIL');
}

/** The error of a listener that could not open, naming the address. */
export function listenError(ip: string, port: number, err: NodeJS.ErrnoException): Error {
  return Object.assign(new Error(`cannot listen on ${ip}:${port}: ${err.code ?? err.message}`), { code: err.code });
}

/** Listens on `ip`; '::' falls back to 0.0.0.0 on hosts without IPv6. */
export function listen(server: import('node:net').Server, port: number, ip: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      if (lacksIpv6(ip, err)) {
        listen(server, port, '0.0.0.0').then(resolve, reject);
        return;
      }
      reject(listenError(ip, port, err));
    };
    server.once('error', onError);
    server.listen({ port, host: ip }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/**
 * Node's defaults let a request trickle in for five minutes. Headers get at most the whole allowance and
 * the request (headers and body) the whole allowance, checked every second or so, so a slow client is cut
 * off close to the configured time.
 */
function requestTimeouts(seconds: number): { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number } {
  const ms = seconds * 1000;
  return { requestTimeout: ms, headersTimeout: ms, connectionsCheckingInterval: Math.min(1000, ms) };
}
