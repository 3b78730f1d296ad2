/**
 * The client side of SASL for tests that must send exactly what they mean to: a STARTTLS stream on a raw peer
 * (raw-xmpp.ts), capped at TLS 1.2 (where tls-unique exists) or left at 1.3, optionally resuming a TLS
 * session, with its features parsed; and SCRAM and PLAIN exchanges with every knob an attacker or a buggy
 * client has (authzid, GS2 flag, channel binding type and data, the AuthMessage a proof is computed over).
 * Used by the SASL attack tests and by the failed-login limit test. It has its own SASLprep mapping (RFC 4013
 * §2.1-2.2, with the code point lists of RFC 3454 written out) so the server's implementation is checked
 * against an independent one, and nothing here imports server code.
 */
import { X509Certificate, createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import type { SecureVersion, TLSSocket } from 'node:tls';
import { RawXmppPeer, parseStreamError, unescapeXml, type StreamErrorInfo } from './raw-xmpp.js';

export type ScramHash = 'sha1' | 'sha256' | 'sha512';
export type ChannelBindingType = 'tls-unique' | 'tls-exporter' | 'tls-server-end-point';

export const SCRAM_MECHANISMS = ['SCRAM-SHA-1', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export type ScramBase = (typeof SCRAM_MECHANISMS)[number];
const HASH_OF: Record<ScramBase, ScramHash> = { 'SCRAM-SHA-1': 'sha1', 'SCRAM-SHA-256': 'sha256', 'SCRAM-SHA-512': 'sha512' };
const KEY_LENGTH: Record<ScramHash, number> = { sha1: 20, sha256: 32, sha512: 64 };

export function hashOf(mechanism: string): ScramHash {
  return HASH_OF[mechanism.replace(/-PLUS$/, '') as ScramBase];
}

// ---------------------------------------------------------------------------------------------------
// SASLprep, client side (RFC 4013 §2.1, §2.2): the steps that make equivalent spellings one string.

/** RFC 3454 table C.1.2. */
const C_1_2 = [0x00a0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x200b, 0x202f, 0x205f, 0x3000];
/** RFC 3454 table B.1. */
const B_1 = [0x00ad, 0x034f, 0x1806, 0x180b, 0x180c, 0x180d, 0x200b, 0x200c, 0x200d, 0x2060, ...Array.from({ length: 16 }, (_, i) => 0xfe00 + i), 0xfeff];

/** Non-ASCII spaces to U+0020, then B.1 to nothing, then NFKC. */
export function clientSaslprep(text: string): string {
  let out = '';
  for (const char of text) {
    const cp = char.codePointAt(0)!;
    if (C_1_2.includes(cp)) out += ' ';
    else if (!B_1.includes(cp)) out += char;
  }
  return out.normalize('NFKC');
}

// ---------------------------------------------------------------------------------------------------
// A stream over STARTTLS, at the SASL stage

export interface Features {
  readonly raw: string;
  readonly mechanisms: string[];
  /** XEP-0440's channel-binding types, in the order announced. */
  readonly channelBindings: string[];
}

export function parseFeatures(raw: string): Features {
  const mechanisms = [...raw.matchAll(/<mechanism>([^<]+)<\/mechanism>/g)].map((m) => m[1]!);
  const cb = /<sasl-channel-binding\b[^>]*xmlns=['"]urn:xmpp:sasl-cb:0['"][^>]*>([\s\S]*?)<\/sasl-channel-binding>/.exec(raw);
  const channelBindings = cb ? [...cb[1]!.matchAll(/<channel-binding\b[^>]*type=['"]([^'"]+)['"]/g)].map((m) => m[1]!) : [];
  return { raw, mechanisms, channelBindings };
}

export interface SecureStreamOptions {
  /** The highest TLS version offered; default TLS 1.3. */
  readonly maxVersion?: SecureVersion;
  /** The stream's `to` (the certificate is verified as localhost whatever it is); default localhost. */
  readonly host?: string;
  /** A TLS session (`tlsSession` of an earlier peer) to offer to resume. */
  readonly session?: Buffer;
  /** The local address to connect from (any of 127/8 on Linux). */
  readonly localAddress?: string;
}

/** Thrown by secureStream when the server answers with a stream error where features were expected. */
export class StreamRefusedError extends Error {
  constructor(readonly streamError: StreamErrorInfo) {
    super(`the server refused the stream: ${streamError.condition}${streamError.text === undefined ? '' : ` (${streamError.text})`}`);
  }
}

/**
 * Connects, opens the stream, STARTTLS with TLS capped at `maxVersion`, and opens the encrypted stream:
 * resolves with the peer and the features offered there. When the server closes the stream with an error
 * instead (a banned address, say), the peer is destroyed and a StreamRefusedError carries that error.
 */
export async function secureStream(port: number, options: SecureStreamOptions = {}): Promise<{ peer: RawXmppPeer; features: Features }> {
  const peer = await RawXmppPeer.connect(port, { localAddress: options.localAddress });
  const host = options.host ?? 'localhost';
  try {
    await peer.open({ to: host });
    await peer.startTls({ maxVersion: options.maxVersion ?? 'TLSv1.3', session: options.session });
    const features = parseFeatures(await peer.open({ to: host }));
    return { peer, features };
  } catch (err) {
    peer.destroy();
    const error = parseStreamError(peer.all);
    throw error ? new StreamRefusedError(error) : err;
  }
}

// ---------------------------------------------------------------------------------------------------
// SASL elements

/** What the server answered one SASL element with. */
export interface SaslAnswer {
  /** `success`, `challenge`, or the failure's condition. */
  readonly outcome: string;
  readonly text?: string;
  /** The payload of a challenge or a success, decoded. */
  readonly data?: string;
}

const b64 = (payload: string | Buffer) => Buffer.from(payload).toString('base64');

export async function saslSend(peer: RawXmppPeer, element: string): Promise<SaslAnswer> {
  peer.resetReceived();
  peer.write(element);
  const [answer] = await peer.waitFor(/<success\b[^>]*\/>|<success\b[\s\S]*?<\/success>|<failure\b[\s\S]*?<\/failure>|<challenge\b[\s\S]*?<\/challenge>/);
  const payload = (name: string) => {
    const inner = new RegExp(`<${name}\\b[^>]*>([^<]*)</${name}>`).exec(answer)?.[1];
    return inner === undefined || inner === '=' ? '' : Buffer.from(inner, 'base64').toString('utf8');
  };
  if (answer.startsWith('<success')) return { outcome: 'success', data: payload('success') };
  if (answer.startsWith('<challenge')) return { outcome: 'challenge', data: payload('challenge') };
  const text = /<text[^>]*>([^<]*)<\/text>/.exec(answer)?.[1];
  return { outcome: /<failure[^>]*>\s*<([a-z-]+)/.exec(answer)?.[1] ?? answer, ...(text === undefined ? {} : { text: unescapeXml(text) }) };
}

export const authElement = (mechanism: string, payload: string | Buffer) =>
  `<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='${mechanism}'>${payload.length ? b64(payload) : '='}</auth>`;
export const responseElement = (payload: string | Buffer) => `<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>${payload.length ? b64(payload) : '='}</response>`;

/** PLAIN as given: authzid NUL authcid NUL password, in UTF-8, with no preparation (the server's job here). */
export function plain(peer: RawXmppPeer, authcid: string, password: string, authzid = ''): Promise<SaslAnswer> {
  return saslSend(peer, authElement('PLAIN', `${authzid}\0${authcid}\0${password}`));
}

// ---------------------------------------------------------------------------------------------------
// Channel bindings, as a client computes them

/** The binding data of `type` on this connection, from the client's side of the handshake. */
export function channelBindingData(socket: TLSSocket, type: ChannelBindingType): Buffer {
  if (type === 'tls-exporter') return socket.exportKeyingMaterial(32, 'EXPORTER-Channel-Binding', Buffer.alloc(0));
  if (type === 'tls-unique') {
    // RFC 5929 §3.1: the first Finished message of the latest handshake: the client's in a full handshake,
    // the server's in an abbreviated (resumed) one.
    return (socket.isSessionReused() ? socket.getPeerFinished() : socket.getFinished())!;
  }
  // RFC 5929 §4.1: the hash of the server's certificate, with its signature's hash (SHA-256 for the fixture).
  const der = socket.getPeerCertificate().raw;
  const ecdsaWithSha256 = Buffer.from('06082a8648ce3d040302', 'hex');
  if (!der.includes(ecdsaWithSha256)) throw new Error(`the test certificate is expected to be signed with ecdsa-with-SHA256 (${new X509Certificate(der).subject})`);
  return createHash('sha256').update(der).digest();
}

// ---------------------------------------------------------------------------------------------------
// SCRAM

export interface ScramOptions {
  readonly mechanism: string;
  readonly user: string;
  readonly password: string;
  /** `a=` in the GS2 header. */
  readonly authzid?: string;
  /** The GS2 flag: default `p=<cbType>` for -PLUS, `n` otherwise. */
  readonly flag?: string;
  /** The binding type for -PLUS (and for `p=` in general); default tls-exporter. */
  readonly cbType?: ChannelBindingType;
  /** Binding data to send instead of the connection's. */
  readonly cbData?: Buffer;
  /** The GS2 header to put in `c=` instead of the one sent in client-first. */
  readonly cHeader?: string;
  /** Compute the proof over a server-first-message without its `h` attribute. */
  readonly dropH?: boolean;
  /** Skip SASLprep of the password on this side (a client that sends another spelling as is). */
  readonly noPrep?: boolean;
}

export interface ScramResult {
  /** `success`, or where and how it failed: the condition of the <failure/>. */
  readonly outcome: string;
  readonly text?: string;
  /** Which message the failure answered: `first` or `final`. */
  readonly failedAt?: 'first' | 'final';
  /** The server-first-message. */
  readonly serverFirst?: string;
  readonly attributes?: Record<string, string>;
  /** On success: whether the server signature (v=) is the right one. */
  readonly serverVerified?: boolean;
}

const escapeSaslname = (name: string) => name.replace(/=/g, '=3D').replace(/,/g, '=2C');

/** One whole SCRAM exchange on `peer` (which must be at the SASL stage). */
export async function scram(peer: RawXmppPeer, options: ScramOptions): Promise<ScramResult> {
  const hash = hashOf(options.mechanism);
  const plus = options.mechanism.endsWith('-PLUS');
  const cbType = options.cbType ?? 'tls-exporter';
  const flag = options.flag ?? (plus ? `p=${cbType}` : 'n');
  const gs2 = `${flag},${options.authzid !== undefined ? `a=${escapeSaslname(options.authzid)}` : ''},`;
  const nonce = randomBytes(18).toString('base64');
  const clientFirstBare = `n=${escapeSaslname(clientSaslprep(options.user))},r=${nonce}`;
  const first = await saslSend(peer, authElement(options.mechanism, gs2 + clientFirstBare));
  if (first.outcome !== 'challenge') return { outcome: first.outcome, text: first.text, failedAt: 'first' };
  const serverFirst = first.data!;
  const attributes = Object.fromEntries(serverFirst.split(',').map((part) => [part[0]!, part.slice(2)]));
  if (!attributes.r?.startsWith(nonce)) throw new Error(`the server nonce does not extend ours: ${serverFirst}`);
  const binding = flag.startsWith('p=') ? (options.cbData ?? channelBindingData(peer.tls, cbType)) : Buffer.alloc(0);
  const withoutProof = `c=${b64(Buffer.concat([Buffer.from(options.cHeader ?? gs2), binding]))},r=${attributes.r}`;
  const password = options.noPrep ? options.password : clientSaslprep(options.password);
  const salted = pbkdf2Sync(password, Buffer.from(attributes.s!, 'base64'), Number(attributes.i), KEY_LENGTH[hash], hash);
  const clientKey = createHmac(hash, salted).update('Client Key').digest();
  const storedKey = createHash(hash).update(clientKey).digest();
  const signedServerFirst = options.dropH ? serverFirst.replace(/,h=[^,]*/, '') : serverFirst;
  const authMessage = `${clientFirstBare},${signedServerFirst},${withoutProof}`;
  const signature = createHmac(hash, storedKey).update(authMessage).digest();
  const proof = Buffer.from(clientKey.map((byte, i) => byte ^ signature[i]!));
  const final = await saslSend(peer, responseElement(`${withoutProof},p=${proof.toString('base64')}`));
  if (final.outcome !== 'success') return { outcome: final.outcome, text: final.text, failedAt: 'final', serverFirst, attributes };
  const serverKey = createHmac(hash, salted).update('Server Key').digest();
  const expected = `v=${createHmac(hash, serverKey).update(authMessage).digest('base64')}`;
  return { outcome: 'success', serverFirst, attributes, serverVerified: final.data === expected };
}

/**
 * XEP-0474's `h`: base64(H(the announced mechanisms sorted and joined by U+001E, then, when channel-binding
 * types were announced, U+001F and those types sorted and joined by U+001E)).
 */
export function downgradeHash(hash: ScramHash, features: Features): string {
  let text = [...features.mechanisms].sort().join('\x1e');
  if (features.channelBindings.length) text += `\x1f${[...features.channelBindings].sort().join('\x1e')}`;
  return createHash(hash).update(text, 'utf8').digest('base64');
}

/** After <success/>: restart the stream and bind; resolves with the bound JID. */
export async function bind(peer: RawXmppPeer, host = 'localhost', resource?: string): Promise<string> {
  await peer.open({ to: host });
  return peer.bind(resource);
}
