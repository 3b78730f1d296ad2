/**
 * SCRAM (RFC 5802, RFC 7677) server side, for SHA-1, SHA-256 and SHA-512, with the -PLUS variants that
 * bind the exchange to the TLS channel (tls-unique and tls-server-end-point, RFC 5929; tls-exporter, RFC 9266).
 *
 * An unknown account gets a fake salt derived from its name, so the exchange looks the same as for a real
 * one and fails only at the proof: SCRAM does not tell who has an account.
 *
 * Downgrades (docs/decisions.md, "SCRAM channel binding and downgrades"):
 * - The server-first-message carries XEP-0474's `h` attribute, the hash of the mechanisms and channel-binding
 *   types this stream announced. The client proof covers it, so a client that checks it detects a list a
 *   man in the middle trimmed, whatever flag it sends.
 * - The GS2 flag `y` ("I could bind, but I think you cannot") is refused only where the client could not
 *   have had an honest reason: the connection offers -PLUS with tls-unique, the one binding RFC 5802 makes
 *   mandatory for clients that bind. On TLS 1.3 there is no tls-unique, and a client that knows only
 *   tls-unique (slixmpp 1.8, Python's ssl) sends `y` honestly after its -PLUS attempt fails.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { InvalidJid, nodeprep } from '@service/plugin-api';
import { DEFAULT_SCRAM_ITERATIONS, SCRAM_SALT_BYTES, scramDigest, scramHmac, type ScramHash } from '../../accounts/scram.js';
import { unescapeSaslname } from './gs2.js';
import { checkAuthzid } from './plain.js';
import { SaslFailure, type ChannelBindingType, type SaslExchange, type SaslMechanism, type SaslPeer, type SaslServices } from '@service/plugin-api';

const FAKE_SALT_KEY = randomBytes(32);

const MECHANISM_HASH: Record<string, ScramHash> = { 'SCRAM-SHA-1': 'sha1', 'SCRAM-SHA-256': 'sha256', 'SCRAM-SHA-512': 'sha512' };

const unstoredOf = new WeakMap<readonly ScramHash[], readonly string[]>();

/** The SCRAM mechanisms (with their -PLUS variants) of the hashes that are not stored; once per stored list. */
export function unstoredScramMechanisms(stored: readonly ScramHash[]): readonly string[] {
  let unstored = unstoredOf.get(stored);
  if (!unstored) {
    unstored = Object.entries(MECHANISM_HASH)
      .filter(([, hash]) => !stored.includes(hash))
      .flatMap(([base]) => [base, `${base}-PLUS`]);
    unstoredOf.set(stored, unstored);
  }
  return unstored;
}

export function scramMechanism(base: 'SCRAM-SHA-1' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512', plus: boolean): SaslMechanism {
  const hash = MECHANISM_HASH[base]!;
  return {
    name: plus ? `${base}-PLUS` : base,
    offered: (peer) => !plus || peer.channelBindings.length > 0,
    start: (peer, services) => new ScramExchange(hash, plus, peer, services),
  };
}

function unescapeName(text: string): string {
  const name = unescapeSaslname(text);
  if (name === undefined) throw new SaslFailure('malformed-request', 'invalid escape in the user name');
  return name;
}

function attributes(message: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of message.split(',')) {
    if (part.length < 2 || part[1] !== '=') throw new SaslFailure('malformed-request', `malformed SCRAM attribute ${JSON.stringify(part.slice(0, 20))}`);
    out.set(part[0]!, part.slice(2));
  }
  return out;
}

class ScramExchange implements SaslExchange {
  #state: 'first' | 'final' | 'done' = 'first';
  #gs2Header = '';
  #channelBinding: Buffer = Buffer.alloc(0);
  #clientFirstBare = '';
  #serverFirst = '';
  #nonce = '';
  #user = '';
  #credential: { salt: Buffer; iterations: number; storedKey: Buffer; serverKey: Buffer } | undefined;
  #real = false;

  constructor(
    private readonly hash: ScramHash,
    private readonly plus: boolean,
    private readonly peer: SaslPeer,
    private readonly services: SaslServices,
  ) {}

  async step(response: Buffer): Promise<{ challenge: Buffer } | { success: { user: string; additionalData: Buffer } }> {
    if (this.#state === 'first') return { challenge: await this.#first(response.toString('utf8')) };
    if (this.#state === 'final') return { success: this.#final(response.toString('utf8')) };
    throw new SaslFailure('malformed-request', 'the SCRAM exchange is over');
  }

  async #first(message: string): Promise<Buffer> {
    // gs2-header: cbind-flag "," [authzid] ","
    const first = message.indexOf(',');
    const second = message.indexOf(',', first + 1);
    if (first === -1 || second === -1) throw new SaslFailure('malformed-request', 'missing GS2 header');
    const flag = message.slice(0, first);
    const authzid = message.slice(first + 1, second);
    this.#gs2Header = message.slice(0, second + 1);
    this.#clientFirstBare = message.slice(second + 1);
    if (this.plus) {
      const type = flag.startsWith('p=') ? (flag.slice(2) as ChannelBindingType) : undefined;
      if (!type) throw new SaslFailure('malformed-request', `${this.hash} -PLUS needs channel binding (p=<type>)`);
      const data = this.peer.channelBindings.includes(type) ? this.peer.channelBinding(type) : undefined;
      if (!data) throw new SaslFailure('malformed-request', `channel binding type ${type} is not supported on this connection`);
      this.#channelBinding = data;
    } else if (flag.startsWith('p=')) {
      throw new SaslFailure('malformed-request', 'channel binding requested with a mechanism without -PLUS');
    } else if (flag === 'y' && this.#yIsDowngrade()) {
      // The client could have bound with tls-unique here, yet believes this server cannot: someone removed -PLUS.
      throw new SaslFailure('not-authorized', 'channel binding downgrade detected: this connection offers SCRAM -PLUS mechanisms with tls-unique');
    } else if (flag !== 'n' && flag !== 'y') {
      throw new SaslFailure('malformed-request', `invalid GS2 channel binding flag ${JSON.stringify(flag)}`);
    }
    if (authzid && !authzid.startsWith('a=')) throw new SaslFailure('malformed-request', 'invalid authzid in the GS2 header');
    const attrs = attributes(this.#clientFirstBare);
    if (attrs.has('m')) throw new SaslFailure('malformed-request', 'mandatory SCRAM extensions are not supported');
    const name = attrs.get('n');
    const clientNonce = attrs.get('r');
    if (name === undefined || !clientNonce) throw new SaslFailure('malformed-request', 'missing user name or nonce');
    try {
      this.#user = nodeprep(unescapeName(name));
    } catch (err) {
      if (!(err instanceof InvalidJid)) throw err;
      this.#user = '';
    }
    if (authzid && this.#user) checkAuthzid(unescapeName(authzid.slice(2)), this.#user, this.peer.host);
    if (this.#user) this.services.admit(this.#user);
    const stored = this.#user ? await this.services.accounts.getScramCredentials(this.#user, this.peer.host, this.hash) : undefined;
    this.#real = stored !== undefined;
    this.#credential = stored ?? {
      salt: createHmac('sha256', FAKE_SALT_KEY).update(`${this.#user}@${this.peer.host}`).digest().subarray(0, SCRAM_SALT_BYTES),
      iterations: DEFAULT_SCRAM_ITERATIONS,
      storedKey: randomBytes(32),
      serverKey: randomBytes(32),
    };
    this.#nonce = clientNonce + randomBytes(18).toString('base64');
    this.#serverFirst = `r=${this.#nonce},s=${this.#credential.salt.toString('base64')},i=${this.#credential.iterations},h=${this.#downgradeProtectionHash()}`;
    this.#state = 'final';
    return Buffer.from(this.#serverFirst);
  }

  #final(message: string): { user: string; additionalData: Buffer } {
    this.#state = 'done';
    const proofAt = message.lastIndexOf(',p=');
    if (proofAt === -1) throw new SaslFailure('malformed-request', 'missing client proof');
    const withoutProof = message.slice(0, proofAt);
    const attrs = attributes(withoutProof);
    const proof = Buffer.from(message.slice(proofAt + 3), 'base64');
    const expectedBinding = Buffer.concat([Buffer.from(this.#gs2Header), this.#channelBinding]).toString('base64');
    if (attrs.get('c') !== expectedBinding) throw new SaslFailure('not-authorized', 'channel binding data do not match');
    if (attrs.get('r') !== this.#nonce) throw new SaslFailure('not-authorized', 'nonce mismatch');
    const credential = this.#credential!;
    const authMessage = `${this.#clientFirstBare},${this.#serverFirst},${withoutProof}`;
    const signature = scramHmac(this.hash, credential.storedKey, authMessage);
    const wrong = () => new SaslFailure('not-authorized', undefined, this.#user || undefined);
    if (proof.length !== signature.length) throw wrong();
    const clientKey = Buffer.alloc(signature.length);
    for (let i = 0; i < signature.length; i++) clientKey[i] = proof[i]! ^ signature[i]!;
    const ok = timingSafeEqual(scramDigest(this.hash, clientKey), credential.storedKey.length === signature.length ? credential.storedKey : Buffer.alloc(signature.length));
    if (!ok || !this.#real) throw wrong();
    const serverSignature = scramHmac(this.hash, credential.serverKey, authMessage);
    return { user: this.#user, additionalData: Buffer.from(`v=${serverSignature.toString('base64')}`) };
  }

  /** Whether a client's `y` flag can only mean a stripped mechanism list (see the file comment). */
  #yIsDowngrade(): boolean {
    const { advertised } = this.peer;
    return advertised.mechanisms.some((name) => name.endsWith('-PLUS')) && advertised.channelBindings.includes('tls-unique');
  }

  /**
   * XEP-0474 (v0.5): the announced mechanisms sorted and joined by U+001E, then, when XEP-0440 announced
   * channel bindings, U+001F and those types sorted and joined by U+001E; hashed with this mechanism's hash.
   * Sorting is by octets ("i;octet"); every name is ASCII, so code-unit order is the same.
   */
  #downgradeProtectionHash(): string {
    const octets = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    const { mechanisms, channelBindings } = this.peer.advertised;
    let text = [...mechanisms].sort(octets).join('\x1e');
    if (channelBindings.length) text += `\x1f${[...channelBindings].sort(octets).join('\x1e')}`;
    return scramDigest(this.hash, Buffer.from(text, 'utf8')).toString('base64');
  }
}
