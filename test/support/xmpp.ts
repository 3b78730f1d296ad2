/**
 * Real XMPP clients for tests: @xmpp/client over TCP (with STARTTLS, verifying the test certificate) or
 * WebSocket, logging in with the SASL mechanism asked for — including SCRAM-SHA-256 and the -PLUS variants,
 * which @xmpp/client lacks and which are added here on the client side. Waiting for what must arrive, and
 * proving that what must not arrive did not (expectSilence).
 */
import { expect } from 'chai';
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { client, xml, type Client, type Element } from '@xmpp/client';
import { WebSocket } from 'ws';
import { baseConfig, type RawConfig, type TestServer } from './server.js';

export { xml };

// Node 20 has no global WebSocket; @xmpp/websocket expects the browser's API, which ws provides.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;
export type { Client, Element };

export const TLS_FIXTURE = new URL('../fixtures/tls/localhost.pem', import.meta.url).pathname;

/** baseConfig plus a c2s listener (STARTTLS required) and WebSocket at /websocket. */
export function xmppConfig(modules: Record<string, unknown> = {}): RawConfig {
  const config = baseConfig();
  (config.listen as any[])[0].request_handlers['/websocket'] = 'service_http_ws';
  (config.listen as any[]).push({ port: 0, ip: '127.0.0.1', module: 'service_c2s', starttls_required: true });
  config.certfiles = [TLS_FIXTURE];
  config.modules = { mod_http_api: {}, ...modules };
  return config;
}

export type Transport = 'tcp' | 'ws';

export interface LoginOptions {
  user: string;
  password: string;
  host?: string;
  resource?: string;
  mechanism?: string;
  transport?: Transport;
  /** Let @xmpp/client reconnect (and resume, with stream management) after a lost connection. */
  reconnect?: boolean;
}

type ScramHash = 'sha1' | 'sha256' | 'sha512';

/** A SCRAM client for xmpp.js's SASL factory; `plus` binds to the TLS channel (tls-exporter). */
function scramClient(name: string, hash: ScramHash, plus: boolean, socketOf: () => TLSSocket | undefined) {
  class ScramClient {
    #stage = 0;
    #nonce = randomBytes(16).toString('base64');
    #first = '';
    #gs2 = '';
    #challenge = '';
    async response(cred: { username: string; password: string }): Promise<string> {
      if (this.#stage === 0) {
        this.#stage = 1;
        this.#gs2 = plus ? 'p=tls-exporter,,' : 'n,,';
        this.#first = `n=${cred.username.replace(/=/g, '=3D').replace(/,/g, '=2C')},r=${this.#nonce}`;
        return this.#gs2 + this.#first;
      }
      const attrs = Object.fromEntries(this.#challenge.split(',').map((p) => [p[0], p.slice(2)]));
      const binding = plus ? socketOf()!.exportKeyingMaterial(32, 'EXPORTER-Channel-Binding', Buffer.alloc(0)) : Buffer.alloc(0);
      const withoutProof = `c=${Buffer.concat([Buffer.from(this.#gs2), binding]).toString('base64')},r=${attrs.r}`;
      const salted = pbkdf2Sync(cred.password.normalize('NFKC'), Buffer.from(attrs.s!, 'base64'), Number(attrs.i), { sha1: 20, sha256: 32, sha512: 64 }[hash], hash);
      const clientKey = createHmac(hash, salted).update('Client Key').digest();
      const storedKey = createHash(hash).update(clientKey).digest();
      const authMessage = `${this.#first},${this.#challenge},${withoutProof}`;
      const signature = createHmac(hash, storedKey).update(authMessage).digest();
      const proof = Buffer.from(clientKey.map((b, i) => b ^ signature[i]!));
      return `${withoutProof},p=${proof.toString('base64')}`;
    }
    async challenge(text: string): Promise<void> {
      this.#challenge = text;
    }
  }
  // The SASL factory reads these from the prototype.
  Object.assign(ScramClient.prototype, { name, clientFirst: true });
  return ScramClient;
}

/** X-OAUTH2 as the spec gives it: NUL, user name, NUL, token (passed as the password). */
class XOAuth2Client {
  async response(cred: { username: string; password: string }): Promise<string> {
    return `\0${cred.username}\0${cred.password}`;
  }
}
Object.assign(XOAuth2Client.prototype, { name: 'X-OAUTH2', clientFirst: true });

/** Connects and logs in; resolves once online (resource bound). */
export async function login(t: TestServer, options: LoginOptions): Promise<Client> {
  const transport = options.transport ?? 'tcp';
  return loginTo(transport === 'tcp' ? `xmpp://127.0.0.1:${t.server.portOf('service_c2s')}` : `ws://127.0.0.1:${t.port}/websocket`, options);
}

/** Connects to `service` (xmpp://127.0.0.1:port, or ws://…/websocket) and logs in; resolves once online. */
export async function loginTo(service: string, options: LoginOptions): Promise<Client> {
  const host = options.host ?? 'localhost';
  // @xmpp/client gives each negotiation step 2 s by default: too little when other suites load the machine.
  const xmpp = client({ service, domain: host, resource: options.resource, timeout: 10_000, credentials: async (authenticate: Function, mechanisms: string[]) => {
    const wanted = options.mechanism ?? mechanisms.find((m) => m !== 'PLAIN') ?? 'PLAIN';
    if (!mechanisms.includes(wanted)) throw new Error(`the server does not offer ${wanted} (it offers ${mechanisms.join(', ')})`);
    await authenticate({ username: options.user, password: options.password }, wanted);
  } } as any);
  const socketOf = () => (xmpp as any).socket?.socket as TLSSocket | undefined;
  const factory = (xmpp as any).saslFactory;
  factory.use(scramClient('SCRAM-SHA-256', 'sha256', false, socketOf));
  factory.use(scramClient('SCRAM-SHA-512', 'sha512', false, socketOf));
  factory.use(scramClient('SCRAM-SHA-1-PLUS', 'sha1', true, socketOf));
  factory.use(scramClient('SCRAM-SHA-256-PLUS', 'sha256', true, socketOf));
  factory.use(XOAuth2Client);
  xmpp.on('error', () => {});
  if (!options.reconnect) (xmpp as any).reconnect.stop();
  else (xmpp as any).reconnect.delay = 100;
  await xmpp.start();
  return xmpp;
}

/** Resolves with the next stanza that matches, or rejects after `ms`. */
export function next(xmpp: Client, predicate: (stanza: Element) => boolean, ms = 5000): Promise<Element> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      xmpp.off('stanza', onStanza);
      reject(new Error('timed out waiting for a stanza'));
    }, ms);
    const onStanza = (stanza: Element) => {
      if (!predicate(stanza)) return;
      clearTimeout(timer);
      xmpp.off('stanza', onStanza);
      resolve(stanza);
    };
    xmpp.on('stanza', onStanza);
  });
}

/** Collects every stanza received from now on. */
export function collect(xmpp: Client): Element[] {
  const out: Element[] = [];
  xmpp.on('stanza', (stanza: Element) => out.push(stanza));
  return out;
}

/** What expectSilence returns: the proof that ends the watch. */
export interface Silence {
  /**
   * Sends the probe (`send`), waits up to `ms` (10 s: other suites may load the machine) for it to reach the
   * client (`arrived` recognizes it), stops watching once it has and `send` has finished (which may include
   * a round trip, to wait for more than the probe), and asserts that nothing unwanted arrived meanwhile.
   * Resolves with the probe as received.
   */
  proveWith(send: () => Promise<unknown>, arrived: (stanza: Element) => boolean, ms?: number): Promise<Element>;
}

/**
 * Asserts that stanzas matching `unwanted` do not reach `xmpp`, in a way that cannot pass by accident: a
 * silence proves nothing if the connection is dead or the listener broken. Call it before the action whose
 * effect must not arrive; after the action, `proveWith` sends a probe along the same path (the same kind of
 * stanza, through the same sender or server command, to the same connection) that must arrive, and waits
 * for it. The server handles each stream's stanzas one at a time, in order, so what the action would have
 * delivered arrives before a probe sent after it; and a probe that never comes fails the test instead of
 * letting the silence pass. `what` names the unwanted stanzas in the failure message.
 */
export function expectSilence(xmpp: Client, unwanted: (stanza: Element) => boolean, what = 'stanzas that must not arrive'): Silence {
  const seen: Element[] = [];
  let probe: ((stanza: Element) => boolean) | undefined;
  // The probe is not one of the unwanted, even if it looks like one.
  const onStanza = (stanza: Element) => {
    if (!probe?.(stanza) && unwanted(stanza)) seen.push(stanza);
  };
  xmpp.on('stanza', onStanza);
  return {
    async proveWith(send, arrived, ms = 10_000) {
      probe = arrived;
      const got = next(xmpp, arrived, ms).catch((err: Error) => {
        throw new Error(`the probe did not arrive, so the silence proves nothing (${err.message})`);
      });
      let stanza: Element;
      try {
        await send();
        stanza = await got;
      } finally {
        got.catch(() => {});
        xmpp.off('stanza', onStanza);
      }
      if (seen.length) expect.fail(`${what} arrived before the probe: ${seen.join(' ')}`);
      return stanza;
    },
  };
}

/**
 * Chat both ways between two available clients (other processes or nodes, where that is the point): `a`
 * writes to `b`'s full JID, `b` to `a`'s bare JID (`aBare`); each message arrives from the sender's full JID.
 */
export async function expectChatBothWays(a: Client, aBare: string, b: Client): Promise<void> {
  const full = (c: Client) => String((c as any).jid);
  const toB = next(b, (s) => s.name === 'message' && s.getChildText('body') === 'hello b');
  await a.send(xml('message', { to: full(b), type: 'chat' }, xml('body', {}, 'hello b')));
  expect((await toB).attrs.from).to.equal(full(a));
  const toA = next(a, (s) => s.name === 'message' && s.getChildText('body') === 'hello a');
  await b.send(xml('message', { to: aBare, type: 'chat' }, xml('body', {}, 'hello a')));
  expect((await toA).attrs.from).to.equal(full(b));
}

/** `a` pings `b` (which answers), then a resource of `b`'s account that is not there (`missing`): service-unavailable. */
export async function expectPingAcross(a: Client, b: Client, missing: string): Promise<void> {
  b.iqCallee.get('urn:xmpp:ping', 'ping', () => ({}));
  const answer = await a.iqCaller.request(xml('iq', { type: 'get', to: String((b as any).jid) }, xml('ping', { xmlns: 'urn:xmpp:ping' })));
  expect(answer.attrs.type).to.equal('result');
  const error = await a.iqCaller.request(xml('iq', { type: 'get', to: missing }, xml('ping', { xmlns: 'urn:xmpp:ping' }))).catch((err: any) => err);
  expect(error?.condition ?? error?.name).to.equal('service-unavailable');
}

export async function stopAll(...clients: Array<Client | undefined>): Promise<void> {
  await Promise.all(clients.map((c) => c?.stop().catch(() => {})));
}

/**
 * Subscribes `contact` to `owner`'s presence (RFC 6121 §3.1), unless it already is: `owner` grants it, so
 * its roster then has `contact` with subscription 'from' or 'both'. Both must be available (have sent
 * presence): the request and the approval are delivered to available resources only.
 */
export async function subscribe(contact: Client, contactJid: string, owner: Client, ownerJid: string): Promise<void> {
  const roster = await owner.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: 'jabber:iq:roster' })));
  const existing = roster.getChild('query')!.getChildren('item').find((i) => i.attrs.jid === contactJid);
  if (existing?.attrs.subscription === 'from' || existing?.attrs.subscription === 'both') return;
  const asked = next(owner, (s) => s.is('presence') && s.attrs.type === 'subscribe' && s.attrs.from === contactJid);
  await contact.send(xml('presence', { to: ownerJid, type: 'subscribe' }));
  await asked;
  const granted = next(contact, (s) => s.is('presence') && s.attrs.type === 'subscribed' && s.attrs.from === ownerJid);
  await owner.send(xml('presence', { to: contactJid, type: 'subscribed' }));
  await granted;
}
